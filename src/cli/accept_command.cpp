#include "ibscope/cli/accept_command.hpp"

#include <fmt/format.h>

#include <charconv>
#include <chrono>

#include "ibscope/accept/accept_runner.hpp"
#include "ibscope/cli/accept_baseline.hpp"
#include "ibscope/cli/flags.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/job/topology_gather.hpp"
#include "ibscope/output/congestion_table.hpp"
#include "ibscope/output/loopback_table.hpp"
#include "ibscope/output/prometheus.hpp"

namespace ibscope::cli {

void add_accept_flags(CLI::App& app, AcceptFlags& f) {
  app.add_option("--transport", f.transport,
                 "All-pairs phase over 'verbs' (RC RDMA WRITE probes), 'ucx', or 'auto': verbs "
                 "when every host has an ACTIVE RDMA port")
      ->default_val("auto")
      ->check(CLI::IsMember({"auto", "ucx", "verbs"}));
  app.add_option("--expect-gbps", f.expect_gbit,
                 "The links' data rate in Gb/s (e.g. 400 for NDR, 0.2 for a 200 Mbit/s shaped "
                 "link); default: each port's speed x width (verbs); without it UCX over TCP "
                 "gets the relative test only");
  app.add_option("--link-kind", f.link_kind,
                 "Overheads to take off the data rate: ib, roce, tcp (1448/1538 of an Ethernet "
                 "frame), tcp-shaped (1448/1514, a tc shaper); default from the port / transport")
      ->check(CLI::IsMember({"ib", "roce", "tcp", "tcp-shaped"}));
  app.add_option("--min-fraction", f.min_fraction,
                 "Absolute test: a link passes at >= this fraction of its expected payload rate")
      ->default_val(0.9);
  app.add_option("--mad-k", f.mad_k,
                 "Relative test: a link fails below median - k x 1.4826 x MAD of all links")
      ->default_val(3);
  app.add_option("--max-latency-ratio", f.max_latency_ratio,
                 "A link fails when its latency exceeds this x the links' median (0: off)")
      ->default_val(3);
  app.add_option("--retests", f.retests,
                 "Measure suspect links again up to this many times; the best attempt counts")
      ->default_val(2);
  app.add_option("--pairs", f.pairs,
                 "Which host pairs, rail to rail (local rank i with local rank i): all (h-1 "
                 "rounds), random:K (K seeded random perfect matchings: K rounds; a given host "
                 "pair is measured with probability K/(h-1)), log (ceil(log2 h) hypercube "
                 "rounds), first (the first two hosts), or auto: all up to 128 hosts, random:8 "
                 "above (docs/acceptance.md)")
      ->default_val("auto");
  app.add_option("--pairs-seed", f.pairs_seed,
                 "Seed of --pairs random:K, to measure the same pairs again (default: drawn, "
                 "printed and kept in the results' acceptance.notes)")
      ->type_name("N");
  app.add_option("--pattern", f.pattern,
                 "After the all-pairs phase, also measure a traffic pattern between each "
                 "host's first rank over UCX: incast:K (K hosts send to one at once, every "
                 "host in turn), one-to-many:K (one host sends to K at once) or bisection (half "
                 "the hosts send to the other half, both directions); pairs: none "
                 "(docs/acceptance.md, Patterns)")
      ->default_val(f.pattern);
  app.add_option("--pattern-hubs", f.pattern_hubs,
                 "--pattern incast/one-to-many: which hosts are hubs (receivers of incast, "
                 "senders of one-to-many), by position in rank order: all, sample:N (N spread "
                 "evenly) or a list such as 0,3")
      ->default_val(f.pattern_hubs);
  app.add_option("--pattern-min-fraction", f.pattern_min_fraction,
                 "--pattern: a round fails when its aggregate is below this fraction of what "
                 "its links should carry (incast: the receiver's link; bisection: one link per "
                 "flow)")
      ->default_val(f.pattern_min_fraction);
  app.add_option("--min-fairness", f.min_fairness,
                 "--pattern: a round of 2 flows or more fails when Jain's fairness index of "
                 "its flows' rates is below this (1: equal shares, 1/n: one flow takes all)")
      ->default_val(f.min_fairness);
  app.add_option("--lat-size", f.lat_size, "Latency message size")->default_val("8");
  app.add_option("--lat-iters", f.lat_iters, "UCX ping-pongs per pair")->default_val(200);
  app.add_option("--bw-size", f.bw_size, "Bandwidth message size")->default_val("1M");
  app.add_option("--bw-window", f.bw_window, "UCX messages in flight per window")->default_val(16);
  app.add_option("--bw-iters", f.bw_iters, "UCX timed windows per pair and direction")
      ->default_val(10);
  app.add_option("--warmup", f.warmup, "UCX untimed iterations per measurement")->default_val(2);
  app.add_option("--verbs-bw-iters", f.verbs_bw_iters, "RDMA WRITEs per QP and direction")
      ->default_val(2000);
  app.add_option("--verbs-lat-iters", f.verbs_lat_iters, "RDMA WRITE ping-pongs per pair")
      ->default_val(1000);
  app.add_option("-d,--ib-dev", f.device,
                 "RDMA device[:port] (a comma list: one per local rank) for the verbs probes and "
                 "the UCX rails; default: one ACTIVE NIC per local rank, the same for the probes "
                 "and UCX (docs/ucx-transports.md)");
  app.add_option("-x,--gid-index", f.gid_index, "GID index (default: chosen from the table)")
      ->default_val(-1);
  app.add_flag("--no-bind", f.no_bind,
               "Do not bind the verbs probes and the UCX ranks to their NIC's NUMA node");
  app.add_flag("--skip-allreduce", f.skip_allreduce, "No all-reduce sweep / straggler check");
  app.add_option("-A,--algorithms", f.algorithms,
                 "All-reduce algorithms for the straggler sweep (comma list; default: all)");
  app.add_option("--ar-sizes", f.ar_sizes, "All-reduce sizes (comma list)")->default_val("64K,4M");
  app.add_option("--ar-iters", f.ar_iters, "All-reduce timed iterations per size")->default_val(20);
  app.add_option("--ar-warmup", f.ar_warmup, "All-reduce warm-up iterations")->default_val(3);
  app.add_option("--max-link-errors", f.max_link_errors,
                 "Counters: a link fails when a physical error counter (symbol errors, CRC, "
                 "receive errors) of one of its NICs grows by more than this (docs/counters.md)")
      ->default_val(0);
  app.add_option("--max-retransmit-ppm", f.max_retransmit_ppm,
                 "Counters: a link fails when its NICs' transport losses (out-of-sequence, "
                 "retries, TCP RetransSegs) exceed this per million packets moved")
      ->default_val(1000);
  app.add_option("--min-retransmits", f.min_retransmits,
                 "Counters: ... and number at least this many (one lost packet in a short test "
                 "is not a verdict)")
      ->default_val(10);
  app.add_option("--congestion-pct", f.congestion_pct,
                 "Counters: congestion events (xmit_wait, CNPs, ECN marks) from this share of "
                 "a link's events are reported as a finding (never a failure)")
      ->default_val(1.0);
  app.add_flag("--congestion", f.congestion,
               "After the other phases, measure the victims' 8 B ping-pong latency and "
               "all-reduce busbw alone and under each congestor; fail on an impact factor "
               "above the limits (GPCNet's congestion test: docs/acceptance.md, Congestion)");
  app.add_option("--congestors", f.congestors,
                 "Congestor patterns run in turn: all, or a comma list of incast, alltoall, "
                 "broadcast")
      ->default_val("all");
  app.add_option("--victim-fraction", f.victim_fraction,
                 "Share of the hosts that are victims (GPCNet: 0.2), spread over the job; the "
                 "others are congestors. One host: split by rank")
      ->default_val(0.2);
  app.add_option("--victim-ranks", f.victim_ranks,
                 "Exactly these ranks are victims (comma list), the others congestors; "
                 "overrides --victim-fraction")
      ->type_name("LIST");
  app.add_option("--max-congestion-impact", f.max_congestion_impact,
                 "Congestion: fail when the victims' p50 latency or all-reduce busbw is worse "
                 "than this factor under a congestor (congested/isolated latency, "
                 "isolated/congested busbw)")
      ->default_val(2.0);
  app.add_option("--max-congestion-tail-impact", f.max_congestion_tail_impact,
                 "Congestion: the same for the p99 latency and the p99-iteration busbw")
      ->default_val(4.0);
  app.add_option("--congestion-ar-size", f.congestion_ar_size,
                 "Congestion: the victims' all-reduce size")
      ->default_val("1M");
  app.add_option("--congestor-size", f.congestor_size, "Congestion: each congestor message's size")
      ->default_val("1M");
  app.add_flag("--no-loopback", f.no_loopback,
               "Skip the preflight's loopback of each NIC (RDMA WRITE and READ from the NIC to "
               "itself, judged against its siblings, port rate and PCIe path)");
  app.add_option("--loopback-budget", f.loopback_budget,
                 "Time for every NIC's loopback on a host, all memories (30s, 2m; below "
                 "--timeout; default 20s, at most half of --timeout)");
  app.add_option("--loopback-size", f.loopback_size, "Loopback message size")->default_val("1M");
  app.add_option("--loopback-mem", f.loopback_mem,
                 "Loopback into host memory, cuda (every GPU's; refused without one), or auto "
                 "(host, and every GPU's where the host has GPUs)")
      ->default_val("auto");
  app.add_option("--loopback-slow-pct", f.loopback_slow_pct,
                 "A NIC whose loopback is this many % below its siblings' median (same host, "
                 "same memory) fails the preflight")
      ->default_val(25);
  app.add_option("--loopback-min-fraction", f.loopback_min_fraction,
                 "A hardware NIC whose loopback is below this fraction of the smaller of its "
                 "port's data rate and its PCIe path's narrowest link fails (0: off)")
      ->default_val(0.5);
  app.add_option("--prometheus-file", f.prometheus_file,
                 "Rank 0 also writes the verdicts as Prometheus metrics to FILE (*.prom, in "
                 "node-exporter's textfile folder), replacing the previous run's atomically")
      ->type_name("FILE");
  app.add_option("--baseline", f.baseline,
                 "Judge every link (and all-reduce row) against a baseline as well: FILE from "
                 "'ibscope baseline' (a link more than --baseline-drop-pct below its median and "
                 "outside its noise band fails), a reference (results/baselines/), or db: each "
                 "link's own accept runs of the last --baseline-days days in the history "
                 "database (--db, default ibscope.db in --out); the shipped reference matching "
                 "the hardware is compared too (docs/baselines.md)")
      ->type_name("FILE");
  app.add_option("--baseline-days", f.baseline_days,
                 "--baseline db: the window of past runs, in days")
      ->check(CLI::Range(1, 36500))
      ->capture_default_str();
  app.add_option("--baseline-drop-pct", f.baseline_drop_pct,
                 "--baseline: a link fails when more than this % below its baseline median (and "
                 "below the median - --baseline-noise-k x its spread)")
      ->default_val(10);
  app.add_option("--baseline-noise-k", f.baseline_noise_k,
                 "--baseline: the noise band, in spreads (1.4826 x MAD of the baseline's runs)")
      ->default_val(3);
}

AcceptCommandOptions to_options(const AcceptFlags& f, double timeout_s) {
  if (!f.prometheus_file.empty()) {
    output::prometheus::check_textfile_path(f.prometheus_file, "--prometheus-file");
  }
  AcceptCommandOptions command{{}, f.prometheus_file};
  accept::AcceptOptions& o = command.accept;
  o.transport = accept::parse_accept_transport(f.transport);
  if (f.expect_gbit < 0)
    throw UsageError(fmt::format("--expect-gbps {}: must be > 0", f.expect_gbit));
  o.expect_line_gbit = f.expect_gbit;
  if (!f.link_kind.empty()) o.link_kind = accept::parse_link_kind(f.link_kind);
  o.thresholds.min_fraction = f.min_fraction;
  o.thresholds.mad_k = f.mad_k;
  o.thresholds.max_latency_ratio = f.max_latency_ratio;
  o.retests = f.retests;
  o.pairs = measure::parse_pair_selection(f.pairs, measure::PairsSyntax::kHostModes);
  if (!f.pairs_seed.empty()) {
    std::uint64_t seed = 0;
    const char* end = f.pairs_seed.data() + f.pairs_seed.size();
    const auto [ptr, ec] = std::from_chars(f.pairs_seed.data(), end, seed);
    if (ec != std::errc() || ptr != end) {
      throw UsageError(
          fmt::format("--pairs-seed '{}': expected a whole number (0 to 2^64-1)", f.pairs_seed));
    }
    o.pairs.seed = seed;
  }
  o.pattern = measure::parse_traffic_pattern(f.pattern);
  o.pattern_hubs = measure::parse_hub_selection(f.pattern_hubs);
  o.pattern_thresholds.min_fraction = f.pattern_min_fraction;
  o.pattern_thresholds.min_fairness = f.min_fairness;
  o.lat_bytes = units::parse_size_bytes(f.lat_size, "--lat-size");
  o.lat_iters = f.lat_iters;
  o.bw_bytes = units::parse_size_bytes(f.bw_size, "--bw-size");
  o.bw_window = f.bw_window;
  o.bw_iters = f.bw_iters;
  o.warmup = f.warmup;
  o.verbs_bw_iters = f.verbs_bw_iters;
  o.verbs_lat_iters = f.verbs_lat_iters;
  o.verbs.devices = probes::parse_device_list(f.device);
  o.verbs.gid_index = f.gid_index;
  o.verbs.bind_to_nic_numa = !f.no_bind;
  o.verbs.timeout_s = timeout_s;
  o.allreduce = !f.skip_allreduce;
  o.loopback = !f.no_loopback;
  o.loopback_probe.budget_s = f.loopback_budget.empty()
                                  ? probes::default_loopback_budget_s(timeout_s)
                                  : units::parse_duration_s(f.loopback_budget, "--loopback-budget");
  o.loopback_probe.size_bytes = units::parse_size_bytes(f.loopback_size, "--loopback-size");
  o.loopback_probe.memory = probes::parse_loopback_memory(f.loopback_mem);
  o.loopback_probe.gid_index = f.gid_index;
  o.loopback_probe.timeout_s = timeout_s;
  o.loopback_thresholds.slow_pct = f.loopback_slow_pct;
  o.loopback_thresholds.min_fraction = f.loopback_min_fraction;
  if (!f.algorithms.empty()) o.algorithms = split_list(f.algorithms);
  for (const auto& a : o.algorithms) (void)collectives::find_algorithm(Collective::kAllreduce, a);
  o.allreduce_bytes.clear();
  for (const auto& s : split_list(f.ar_sizes)) {
    o.allreduce_bytes.push_back(units::parse_size_bytes(s, "--ar-sizes"));
  }
  o.allreduce_iters = f.ar_iters;
  o.allreduce_warmup = f.ar_warmup;
  o.timeout_s = timeout_s;
  if (f.max_retransmit_ppm < 0 || f.congestion_pct < 0) {
    throw UsageError(fmt::format("--max-retransmit-ppm {} / --congestion-pct {}: must be >= 0",
                                 f.max_retransmit_ppm, f.congestion_pct));
  }
  o.counter_thresholds = accept::CounterThresholds{.max_link_errors = f.max_link_errors,
                                                   .max_retransmit_ppm = f.max_retransmit_ppm,
                                                   .min_retransmits = f.min_retransmits,
                                                   .congestion_finding_pct = f.congestion_pct};
  if (!f.baseline.empty()) {
    if (!(f.baseline_drop_pct > 0 && f.baseline_drop_pct < 100) || !(f.baseline_noise_k >= 0)) {
      throw UsageError(fmt::format(
          "--baseline-drop-pct {} / --baseline-noise-k {}: expected 0 < pct < 100 and k >= 0",
          f.baseline_drop_pct, f.baseline_noise_k));
    }
    if (f.baseline == "db") {
      // Rank 0 reads the history once the job runs (accept_body); the caller sets the path.
      command.baseline_days = f.baseline_days;
    } else {
      // Read on every rank before the job starts: a bad file stops every rank with one line.
      command.baseline =
          std::make_shared<const results::Baseline>(results::load_baseline(f.baseline));
      o.history =
          std::make_shared<const accept::History>(history_of(*command.baseline, f.baseline));
    }
    o.history_thresholds =
        accept::HistoryThresholds{.drop_pct = f.baseline_drop_pct, .noise_k = f.baseline_noise_k};
  }
  o.congestion.enabled = f.congestion;
  o.congestion.congestors = accept::parse_congestors(f.congestors);
  o.congestion.victim_fraction = f.victim_fraction;
  o.congestion.victim_ranks.clear();
  if (!f.victim_ranks.empty()) {
    for (const auto& item : split_list(f.victim_ranks)) {
      int rank = -1;
      const char* end = item.data() + item.size();
      const auto [ptr, ec] = std::from_chars(item.data(), end, rank);
      if (ec != std::errc() || ptr != end || rank < 0) {
        throw UsageError(
            fmt::format("--victim-ranks '{}': '{}' is not a rank number", f.victim_ranks, item));
      }
      o.congestion.victim_ranks.push_back(rank);
    }
  }
  o.congestion.max_impact = f.max_congestion_impact;
  o.congestion.max_tail_impact = f.max_congestion_tail_impact;
  o.congestion.allreduce_bytes =
      units::parse_size_bytes(f.congestion_ar_size, "--congestion-ar-size");
  o.congestion.congestor_bytes = units::parse_size_bytes(f.congestor_size, "--congestor-size");
  accept::validate(o);
  return command;
}

int accept_body(job::JobContext& ctx, const AcceptCommandOptions& command) {
  accept::AcceptOptions o = command.accept;
  o.fault_hooks = ctx.fault_hooks;
  o.nic_counters = ctx.nic_counters;
  const bool root = ctx.comm().rank() == 0;
  std::FILE* out = ctx.table_out;
  if (out != nullptr) fmt::print(out, "# acceptance: topology and link-state preflight\n");
  const auto hosts = job::gather_topology(ctx.bootstrap);
  if (ctx.results != nullptr) ctx.results->topology = hosts;
  std::vector<std::string> baseline_warnings;
  if (root && command.baseline && o.history) {
    o.history = std::make_shared<const accept::History>(
        complete_history(*o.history, *command.baseline, hosts, baseline_warnings));
  }
  if (root && !command.baseline_db.empty()) {
    o.history = std::make_shared<const accept::History>(
        history_from_db(command.baseline_db, command.baseline_days, results::utc_now_iso8601(),
                        hosts, baseline_warnings));
  }

  accept::AcceptSinks sinks;
  sinks.p2p = [&](const std::vector<measure::P2pRow>& rows) {
    if (ctx.results != nullptr) {
      for (const auto& r : rows) ctx.results->add_row(r);
    }
    ctx.rows_recorded();
  };
  sinks.probe = [&](const std::vector<measure::ProbeRow>& rows) {
    if (ctx.results != nullptr) {
      for (const auto& r : rows) ctx.results->add_row(r);
    }
    ctx.rows_recorded();
  };
  sinks.collective = [&](const std::vector<measure::CollectiveRow>& rows) {
    if (ctx.results != nullptr) {
      for (const auto& r : rows) ctx.results->add_row(r);
    }
    ctx.rows_recorded();
  };
  sinks.phase = [&](std::string_view phase) {
    if (out != nullptr) {
      fmt::print(out, "# acceptance: {}\n", phase);
      std::fflush(out);
    }
  };
  sinks.loopback = [&](const std::vector<accept::LoopbackVerdict>& verdicts) {
    if (out != nullptr) output::print_loopback_table(out, verdicts);
  };
  const accept::AcceptResult result = accept::run_accept(ctx.comm(), hosts, o, sinks);
  if (!root) return result.pass ? 0 : 1;
  if (ctx.results != nullptr) ctx.results->acceptance = result.section;

  const auto& links = result.section.links;
  int failed_links = 0;
  for (const auto& l : links) failed_links += l.pass ? 0 : 1;
  int failed_hosts = 0;
  for (const auto& h : result.section.hosts) failed_hosts += h.pass ? 0 : 1;
  const std::string verdict = fmt::format(
      "ibscope accept: {} ({} links between {} hosts over {}: {} failed; {} hosts failed)",
      result.pass ? "PASS" : "FAIL", links.size(), result.section.hosts.size(),
      results::name_of(result.section.transport), failed_links, failed_hosts);
  // The summary names only what failed and why; warnings after it.
  std::FILE* summary = out != nullptr ? out : stderr;
  if (out != nullptr && result.section.congestion) {
    fmt::print(out, "{}", output::congestion_table(*result.section.congestion));
  }
  fmt::print(summary, "{}\n", verdict);
  if (const auto& b = result.section.baseline) {
    fmt::print(summary,
               "  baseline {}: {} of {} links known to it fell below it (more than {:g} % and "
               "{:g} spreads){}\n",
               b->source, b->links_below, b->links_known, b->drop_pct, b->noise_k,
               b->reference.empty()
                   ? std::string("; no shipped reference matches this hardware")
                   : fmt::format("; reference {}: {} links more than {:g} % below it", b->reference,
                                 b->links_below_reference, b->drop_pct));
  }
  for (const auto& f : result.failures) fmt::print(summary, "  FAIL {}\n", f);
  for (const auto& w : result.warnings) fmt::print(summary, "  warning: {}\n", w);
  for (const auto& w : baseline_warnings) fmt::print(summary, "  warning: {}\n", w);
  std::fflush(summary);
  if (!command.prometheus_file.empty()) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const double now_s =
        static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(now).count());
    write_file_replacing(command.prometheus_file,
                         output::prometheus::exposition_text(
                             output::prometheus::acceptance_metrics(result.section, now_s)));
  }
  return result.pass ? 0 : 1;
}

}  // namespace ibscope::cli
