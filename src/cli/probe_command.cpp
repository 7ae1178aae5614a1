#include "ibscope/cli/probe_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ibscope/accept/loopback_phase.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/sweep.hpp"
#include "ibscope/output/loopback_table.hpp"
#include "ibscope/output/probe_table.hpp"
#include "ibscope/probes/probe_runner.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::cli {
namespace {

using probes::Metric;

std::vector<std::uint64_t> probe_sizes(const ProbeFlags& f, const probes::ProbeTest& test) {
  const bool sweep = !f.min_bytes.empty() || !f.max_bytes.empty();
  if (static_cast<int>(!f.size.empty()) + static_cast<int>(f.all_sizes) + static_cast<int>(sweep) >
      1) {
    throw UsageError("give one of -s/--size, -a/--all, or -b/-e (a sweep)");
  }
  if (!f.size.empty()) return {units::parse_size_bytes(f.size, "-s/--size")};
  if (f.all_sizes) {
    // perftest's -a: 2 B to 8 MiB in powers of two.
    return measure::sweep_sizes(measure::SweepSpec{.min_bytes = probes::kPerftestMinBytes,
                                                   .max_bytes = probes::kPerftestMaxBytes,
                                                   .factor = 2,
                                                   .step_bytes = 0,
                                                   .explicit_bytes = {}},
                                1);
  }
  if (sweep) {
    return measure::sweep_sizes(
        measure::SweepSpec{.min_bytes = f.min_bytes.empty()
                                            ? probes::kPerftestMinBytes
                                            : units::parse_size_bytes(f.min_bytes, "-b/--minbytes"),
                           .max_bytes = f.max_bytes.empty()
                                            ? probes::kPerftestMaxBytes
                                            : units::parse_size_bytes(f.max_bytes, "-e/--maxbytes"),
                           .factor = f.factor,
                           .step_bytes = 0,
                           .explicit_bytes = {}},
        1);
  }
  return {probes::perftest_defaults(test).size_bytes};
}

results::ProbeParams params_of(const probes::ProbeOptions& o) {
  results::ProbeParams p;
  p.test = o.test->name;
  p.verb = std::string(probes::to_string(o.test->verb));
  p.metric = o.test->metric == Metric::kLatency ? "latency" : "bandwidth";
  p.sizes_bytes = o.sizes_bytes;
  p.iterations = o.iterations;
  p.warmup = o.warmup;
  p.qps = o.qps;
  p.tx_depth = o.tx_depth;
  p.rx_depth = o.rx_depth;
  p.inline_bytes_requested = o.inline_bytes;
  p.cq_moderation = o.cq_moderation;
  p.mtu_bytes_requested = o.tuning.mtu_bytes;
  p.gid_index_requested = o.gid_index;
  for (const auto& d : o.devices) p.devices.push_back(fmt::format("{}:{}", d.device, d.port));
  p.bidirectional = o.bidirectional;
  p.qp_timeout = o.tuning.timeout;
  p.retry_count = o.tuning.retry_count;
  p.rnr_retry = o.tuning.rnr_retry;
  p.service_level = o.tuning.service_level;
  p.traffic_class = o.tuning.traffic_class;
  p.hop_limit = o.tuning.hop_limit;
  p.pkey_index = o.tuning.pkey_index;
  p.bind_to_nic_numa = o.bind_to_nic_numa;
  p.mem = probes::to_string(o.mem);
  p.mem_initiator = std::string(memory::name_of(o.mem.initiator));
  p.mem_responder = std::string(memory::name_of(o.mem.responder));
  p.timeout_s = o.timeout_s;
  return p;
}

std::vector<results::VerbsPort> verbs_ports(const std::vector<probes::RankPort>& ports) {
  std::vector<results::VerbsPort> out;
  for (std::size_t r = 0; r < ports.size(); ++r) {
    const auto& p = ports[r];
    out.push_back(results::VerbsPort{.rank = static_cast<int>(r),
                                     .device = p.device,
                                     .link_layer = p.link_layer,
                                     .data_rate_gbit = p.data_rate_gbit,
                                     .gid_index = p.gid_index,
                                     .gid = p.gid,
                                     .active_mtu_bytes = p.active_mtu_bytes,
                                     .binding = p.binding,
                                     .mem_initiator = p.mem_initiator,
                                     .mem_responder = p.mem_responder,
                                     .registration = p.registration,
                                     .gpu = p.gpu,
                                     .cuda_device = p.cuda_device,
                                     .gpu_name = p.gpu_name,
                                     .gpu_nic_path = p.gpu_nic_path,
                                     .gpu_choice = p.gpu_choice,
                                     .gpu_warnings = p.gpu_warnings});
  }
  return out;
}

/// The GPU lines under the ports of the table, for ranks with GPU buffers.
void print_gpus(std::FILE* out, const std::vector<probes::RankPort>& ports) {
  for (std::size_t r = 0; r < ports.size(); ++r) {
    const auto& p = ports[r];
    if (p.gpu.empty()) continue;
    fmt::print(out,
               "#   rank {:>4}  mem {}/{} (initiator/responder)  {} cuda:{} {}  {} to the NIC, "
               "registered by {}\n",
               r, p.mem_initiator.empty() ? "-" : p.mem_initiator,
               p.mem_responder.empty() ? "-" : p.mem_responder, p.gpu, p.cuda_device, p.gpu_name,
               p.gpu_nic_path, p.registration);
  }
  std::fflush(out);
}

}  // namespace

void add_probe_flags(CLI::App& app, ProbeFlags& f) {
  std::string names;
  for (const auto& t : probes::probe_tests()) {
    names += fmt::format("\n    {:<10} {}", t.name, t.description);
  }
  names += fmt::format("\n    {:<10} {}", kLoopbackProbe,
                       "each NIC's RDMA WRITE and READ to itself (two QPs on one port), every "
                       "NIC of every host, judged against its siblings, port rate and PCIe path; "
                       "one rank per host is enough");
  app.add_option("test", f.test, "The probe:" + names)->required();
  app.add_option("-s,--size", f.size,
                 "One message size (K/M/G suffixes); default 64K for "
                 "bandwidth, 2 for latency (perftest's)");
  app.add_flag("-a,--all", f.all_sizes, "Sweep 2 B .. 8 MiB in powers of two (perftest -a)");
  app.add_option("-b,--minbytes", f.min_bytes, "Sweep from this size (with -e)");
  app.add_option("-e,--maxbytes", f.max_bytes, "Sweep up to this size");
  app.add_option("-f,--stepfactor", f.factor, "Sweep: multiply the size by this")->default_val(2);
  app.add_option("-n,--iters", f.iters,
                 "Timed messages per QP (bandwidth, default 5000) or ping-pongs (latency, "
                 "default 1000)")
      ->check(CLI::Range(1, 100000000));
  app.add_option("-w,--warmup", f.warmup,
                 "Untimed messages/ping-pongs before each size (default: 1/10 of -n, at most 100)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("-q,--qp", f.qps, "Queue pairs per rank pair (bandwidth tests)")
      ->default_val(1)
      ->check(CLI::Range(1, 1024));
  app.add_option("-t,--tx-depth", f.tx_depth,
                 "Messages in flight per QP (default 128 for bandwidth, 1 for latency)")
      ->check(CLI::Range(1, 65536));
  app.add_option("-r,--rx-depth", f.rx_depth, "Receives kept posted per QP (send tests)")
      ->default_val(512)
      ->check(CLI::Range(1, 65536));
  app.add_option("-I,--inline-size", f.inline_size,
                 "Post messages up to this size inline (default 220 for write/send latency, 0 "
                 "otherwise; the device may grant less, the row records what it granted)")
      ->check(CLI::Range(0, 65536));
  app.add_option("-Q,--cq-mod", f.cq_mod,
                 "Bandwidth: one signalled completion per this many "
                 "messages")
      ->default_val(100)
      ->check(CLI::Range(1, 65536));
  app.add_option("-m,--mtu", f.mtu,
                 "Path MTU 256..4096 (default: the smaller active MTU of the "
                 "two ports)")
      ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}));
  app.add_option("-x,--gid-index", f.gid_index,
                 "GID index (default: a RoCE v2 GID, IPv4-mapped first, on Ethernet; LID "
                 "addressing on InfiniBand)")
      ->check(CLI::Range(0, 65535));
  app.add_option(
      "-d,--ib-dev", f.device,
      "RDMA device[:port], or a comma list from which each rank takes entry local_rank "
      "mod length (one NIC per local rank); default: each rank's own NIC, as --nic chooses "
      "the UCX rails (the NIC closest to the rank's GPU, else the ACTIVE NICs in name "
      "order, one per local rank)");
  app.add_flag("-B,--bidirectional", f.bidirectional,
               "Bandwidth both ways at once; the row reports the sum");
  app.add_option("--pairs", f.pairs,
                 "all (every pair, in rounds of disjoint pairs), first (0:1), or a list 0:1,2:3 "
                 "(the first rank of each pair initiates)")
      ->default_val("all");
  app.add_option("-u,--qp-timeout", f.qp_timeout, "QP local ACK timeout code (4.096 us x 2^N)")
      ->default_val(14);
  app.add_option("--retry-count", f.retry_count, "Transport retries before an error")
      ->default_val(7);
  app.add_option("--rnr-retry", f.rnr_retry, "Receiver-not-ready retries (7 = forever)")
      ->default_val(7);
  app.add_option("-S,--sl", f.service_level, "Service level")->default_val(0);
  app.add_option("-T,--tclass", f.traffic_class, "Traffic class (RoCE: DSCP << 2 | ECN)")
      ->default_val(0);
  app.add_option("--hop-limit", f.hop_limit, "GRH hop limit")->default_val(64);
  app.add_option("--pkey-index", f.pkey_index, "Partition key table index")
      ->default_val(0)
      ->check(CLI::Range(0, 65535));
  app.add_flag("--no-bind", f.no_bind,
               "Do not bind CPUs and memory to the NIC's NUMA node (bound by default)");
  app.add_option("--mem", f.mem,
                 "Where the message buffers live: host or cuda for both sides, or "
                 "INITIATOR,RESPONDER such as host,cuda (the initiator is the first rank of a "
                 "pair: writer, sender, reader). cuda: device memory on the GPU closest to the "
                 "rank's NIC (one per local rank), registered by dma-buf, else nvidia-peermem; "
                 "not with write_lat (its CPU polls the buffer)")
      ->default_val("host");
  app.add_option("--loopback-budget", f.loopback_budget,
                 "loopback: time for every NIC of a host (30s, 2m; below --timeout; default "
                 "20s, at most half of --timeout)");
  app.add_option("--loopback-slow-pct", f.loopback_slow_pct,
                 "loopback: a NIC this many % below its siblings' median fails")
      ->default_val(25);
}

probes::LoopbackOptions to_loopback_options(const ProbeFlags& f, double timeout_s) {
  probes::LoopbackOptions o;
  if (f.all_sizes || !f.min_bytes.empty() || !f.max_bytes.empty() || f.bidirectional) {
    throw UsageError("probe loopback: one size only (-s); no -a, -b/-e or -B");
  }
  if (!f.size.empty()) o.size_bytes = units::parse_size_bytes(f.size, "-s/--size");
  if (f.iters > 0) o.max_iterations = std::max(f.iters, o.min_iterations);
  if (f.tx_depth > 0) o.tx_depth = f.tx_depth;
  o.gid_index = f.gid_index;
  o.tuning.mtu_bytes = static_cast<std::uint32_t>(f.mtu);
  o.budget_s = f.loopback_budget.empty()
                   ? probes::default_loopback_budget_s(timeout_s)
                   : units::parse_duration_s(f.loopback_budget, "--loopback-budget");
  o.timeout_s = timeout_s;
  if (f.mem == "host") {
    o.memory = probes::LoopbackMemory::kHost;
  } else if (f.mem == "cuda") {
    o.memory = probes::LoopbackMemory::kCuda;
  } else {
    throw UsageError(fmt::format("probe loopback --mem {}: expected host or cuda", f.mem));
  }
  for (const auto& d : probes::parse_device_list(f.device)) {
    if (!d.device.empty()) o.devices.push_back(d.device);
  }
  if (!(f.loopback_slow_pct > 0 && f.loopback_slow_pct < 100)) {
    throw UsageError(
        fmt::format("--loopback-slow-pct {}: must be in (0, 100)", f.loopback_slow_pct));
  }
  probes::validate(o);
  if (o.budget_s >= timeout_s) {
    throw UsageError(fmt::format("--loopback-budget {:g} s: must be below --timeout ({:g} s)",
                                 o.budget_s, timeout_s));
  }
  return o;
}

probes::ProbeOptions to_options(const ProbeFlags& f, int ranks, double timeout_s) {
  probes::ProbeOptions o;
  o.test = &probes::find_probe_test(f.test);
  const probes::PerftestDefaults perftest = probes::perftest_defaults(*o.test);
  o.sizes_bytes = probe_sizes(f, *o.test);
  o.iterations = f.iters > 0 ? f.iters : perftest.iterations;
  o.warmup = f.warmup >= 0 ? f.warmup : probes::perftest_warmup(o.iterations);
  o.qps = f.qps;
  o.tx_depth = f.tx_depth > 0 ? f.tx_depth : perftest.tx_depth;
  o.rx_depth = f.rx_depth;
  o.inline_bytes = f.inline_size;
  o.cq_moderation = f.cq_mod;
  o.tuning.mtu_bytes = static_cast<std::uint32_t>(f.mtu);
  o.gid_index = f.gid_index;
  o.devices = probes::parse_device_list(f.device);
  o.bidirectional = f.bidirectional;
  o.pairs =
      measure::parse_pair_selection(f.pairs, measure::PairsSyntax::kRankList, std::max(ranks, 2));
  o.tuning.timeout = f.qp_timeout;
  o.tuning.retry_count = f.retry_count;
  o.tuning.rnr_retry = f.rnr_retry;
  o.tuning.service_level = f.service_level;
  o.tuning.traffic_class = f.traffic_class;
  o.tuning.hop_limit = f.hop_limit;
  o.tuning.pkey_index = f.pkey_index;
  o.bind_to_nic_numa = !f.no_bind;
  o.mem = probes::parse_mem_sides(f.mem);
  o.timeout_s = timeout_s;
  probes::validate(o);
  return o;
}

namespace {

int loopback_body(job::JobContext& ctx, const ProbeFlags& flags) {
  const probes::LoopbackOptions o = to_loopback_options(flags, ctx.timeout_s);
  accept::LoopbackThresholds t;
  t.slow_pct = flags.loopback_slow_pct;
  const accept::LoopbackPhase phase = accept::run_loopback_phase(ctx.bootstrap, o, t);
  if (ctx.bootstrap.rank() != 0) return 0;
  if (ctx.results != nullptr) ctx.results->loopback = phase.section;
  if (phase.verdicts.empty()) {
    throw verbs::EnvironmentError(
        "probe loopback: no host of the job has an RDMA device with an ACTIVE port (ibscope topo "
        "lists them; -d names devices that exist)");
  }
  if (ctx.table_out != nullptr) output::print_loopback_table(ctx.table_out, phase.verdicts);
  const bool pass = std::all_of(phase.verdicts.begin(), phase.verdicts.end(),
                                [](const accept::LoopbackVerdict& v) { return v.pass; });
  std::FILE* summary = ctx.table_out != nullptr ? ctx.table_out : stderr;
  fmt::print(summary, "ibscope probe loopback: {} ({} NIC/memory runs, {} failed)\n",
             pass ? "PASS" : "FAIL", phase.verdicts.size(),
             std::count_if(phase.verdicts.begin(), phase.verdicts.end(),
                           [](const accept::LoopbackVerdict& v) { return !v.pass; }));
  std::fflush(summary);
  return pass ? 0 : 1;
}

}  // namespace

int probe_body(job::JobContext& ctx, const ProbeFlags& flags) {
  if (flags.test == kLoopbackProbe) return loopback_body(ctx, flags);
  auto o = to_options(flags, ctx.bootstrap.size(), ctx.timeout_s);
  o.nic_counters = ctx.nic_counters;
  if (ctx.results != nullptr) {
    if (!ctx.results->probes) ctx.results->probes.emplace();
    ctx.results->probes->params = params_of(o);
  }
  std::optional<output::ProbeTable> table;
  if (ctx.table_out != nullptr) table.emplace(ctx.table_out, *o.test, ctx.bootstrap.size());
  probes::ProbeSinks sinks;
  sinks.ports = [&](const std::vector<probes::RankPort>& ports) {
    if (ctx.results != nullptr) {
      ctx.results->environment.verbs_ports = verbs_ports(ports);
      for (std::size_t r = 0; r < ports.size(); ++r) {
        for (const auto& w : ports[r].gpu_warnings) {
          ctx.results->add_warning(fmt::format("rank {}: {}", r, w));
        }
      }
    }
    if (table) {
      table->ports(ports, ctx.bootstrap.hosts());
      print_gpus(ctx.table_out, ports);
    }
    for (std::size_t r = 0; r < ports.size(); ++r) {
      for (const auto& w : ports[r].gpu_warnings)
        fmt::print(stderr, "warning: rank {}: {}\n", r, w);
    }
  };
  sinks.rows = [&](const std::vector<measure::ProbeRow>& rows) {
    if (ctx.results != nullptr) {
      for (const auto& r : rows) ctx.results->add_row(r);
    }
    ctx.rows_recorded();
    if (table) table->rows(rows);
  };
  probes::run_probe(ctx.bootstrap, o, sinks);
  if (table) table->footer();
  return 0;
}

}  // namespace ibscope::cli
