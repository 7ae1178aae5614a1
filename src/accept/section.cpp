#include "section.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ibscope/accept/localize.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/core/units.hpp"
#include "pattern_section.hpp"

namespace ibscope::accept {
namespace {

std::string rate(double gbps) {
  // Links here run from MB/s (shaped test links) to tens of GB/s: pick the unit per figure.
  return gbps >= 1 ? fmt::format("{:.2f} GB/s", gbps) : fmt::format("{:.2f} MB/s", gbps * 1e3);
}

results::AcceptPreflight preflight_section(const Preflight& p) {
  results::AcceptPreflight out{.pass = p.pass(),
                               .rdma_everywhere = p.rdma_everywhere,
                               .no_rdma_reason = p.no_rdma_reason,
                               .fabric_data_rate_gbit = p.fabric_data_rate_gbit,
                               .link_layer = p.link_layer,
                               .active_mtu_bytes = p.active_mtu_bytes,
                               .findings = {},
                               .loopback = p.loopback};
  for (const auto& f : p.findings) {
    out.findings.push_back(results::PreflightFinding{f.host, f.device, f.fatal, f.message});
  }
  return out;
}

results::AcceptThresholds thresholds_section(const AcceptOptions& o) {
  return {.min_fraction = o.thresholds.min_fraction,
          .mad_k = o.thresholds.mad_k,
          .mad_floor_fraction = o.thresholds.mad_floor_fraction,
          .max_latency_ratio = o.thresholds.max_latency_ratio,
          .retests = o.retests,
          .straggler_min_last_fraction = o.straggler.min_last_fraction,
          .straggler_min_late_fraction = o.straggler.min_late_fraction,
          .straggler_min_late_us = o.straggler.min_late_us};
}

struct NicVerdict {
  std::string host, nic;
  int links = 0, failed_links = 0;
};

// Links through each NIC (host, device). A NIC whose every link failed is named.
std::vector<NicVerdict> nic_verdicts(const SectionInputs& in) {
  std::map<std::pair<std::string, std::string>, NicVerdict> nics;
  for (std::size_t i = 0; i < in.report.links.size(); ++i) {
    const LinkVerdict& v = in.report.links[i];
    const LinkEvidence& e = in.links.evidence[i];
    for (const auto& [host, nic] :
         {std::pair{v.link.host_a, e.nic_a}, std::pair{v.link.host_b, e.nic_b}}) {
      if (nic.empty()) continue;
      NicVerdict& n = nics[{host, nic}];
      n.host = host;
      n.nic = nic;
      ++n.links;
      if (!v.pass) ++n.failed_links;
    }
  }
  std::vector<NicVerdict> out;
  for (auto& [key, n] : nics) out.push_back(n);
  return out;
}

results::Stragglers stragglers_section(const StragglerReport& s,
                                       const std::vector<measure::CollectiveRow>& rows) {
  results::Stragglers out;
  out.clock_uncertainty_us = s.clock_uncertainty_us;
  out.reason = s.reason;
  for (const auto& r : s.ranks) {
    out.ranks.push_back(results::StragglerRank{.rank = r.rank,
                                               .host = r.host,
                                               .iterations = r.iterations,
                                               .last_count = r.last_count,
                                               .last_fraction = r.last_fraction,
                                               .median_late_us = r.median_late_us,
                                               .median_late_fraction = r.median_late_fraction});
  }
  for (std::size_t i = 0; i < rows.size() && i < s.lateness_us.size(); ++i) {
    out.rows.push_back(results::StragglerRow{.algorithm = rows[i].algorithm,
                                             .size_bytes = rows[i].size_bytes,
                                             .in_place = rows[i].in_place,
                                             .arrival_us = s.lateness_us[i]});
  }
  if (s.straggler) {
    out.straggler =
        results::NamedStraggler{*s.straggler, s.ranks[static_cast<std::size_t>(*s.straggler)].host};
  }
  return out;
}

void add_preflight_messages(const SectionInputs& in, AcceptResult& out) {
  for (const auto& f : in.preflight.findings) {
    const std::string where =
        f.host.empty() ? "" : fmt::format("{}{}: ", f.host, f.device.empty() ? "" : " " + f.device);
    (f.fatal ? out.failures : out.warnings)
        .push_back(fmt::format("preflight: {}{}", where, f.message));
  }
  for (const auto& note : in.links.notes) out.warnings.push_back(note);
}

// Every link's evidence and verdict, in the report's order.
std::vector<results::AcceptLink> link_sections(const SectionInputs& in) {
  const AcceptReport& report = in.report;
  std::vector<results::AcceptLink> links;
  for (std::size_t i = 0; i < report.links.size(); ++i) {
    const LinkVerdict& v = report.links[i];
    const LinkEvidence& e = in.links.evidence[i];
    links.push_back(results::AcceptLink{.rank_a = v.link.rank_a,
                                        .rank_b = v.link.rank_b,
                                        .host_a = v.link.host_a,
                                        .host_b = v.link.host_b,
                                        .nic_a = e.nic_a,
                                        .nic_b = e.nic_b,
                                        .measured_gbps = v.link.measured_gbps,
                                        .gbps_a_to_b = e.gbps_a_to_b,
                                        .gbps_b_to_a = e.gbps_b_to_a,
                                        .expected_gbps = v.link.expected_gbps,
                                        .line_rate_gbit = e.line_rate_gbit,
                                        .link_kind = e.link_kind,
                                        .fraction_of_expected = v.fraction_of_expected,
                                        .peers_median_gbps = v.peers_median_gbps,
                                        .latency_us = v.link.latency_us,
                                        .peers_median_latency_us = report.median_latency_us,
                                        .attempts = v.link.attempts,
                                        .transports = e.transports,
                                        .below_expected = v.below_expected,
                                        .outlier = v.outlier,
                                        .slow_latency = v.slow_latency,
                                        .pass = v.pass,
                                        .reason = v.reason});
    if (v.link.counters) {
      results::AcceptLink& l = links.back();
      l.nic_counters = e.nic_counters;
      l.counter_errors = v.link.counters->errors;
      l.flapped = v.link.counters->flapped;
      l.congestion_pct = v.link.counters->congestion_pct;
      l.counters = v.link.counters->summary();
    }
    if (v.link.history) {
      const HistoryFinding& h = *v.link.history;
      links.back().baseline =
          results::AcceptLinkBaseline{.known = h.known,
                                      .median_gbps = h.median_gbps,
                                      .spread_gbps = h.spread_gbps,
                                      .runs = static_cast<int>(h.runs),
                                      .drop_pct = h.drop_pct,
                                      .below = h.below,
                                      .reference = h.reference_name,
                                      .reference_gbps = h.reference_gbps,
                                      .reference_drop_pct = h.reference_drop_pct,
                                      .below_reference = h.below_reference};
    }
  }
  return links;
}

// accept --baseline: the summary, and a warning per link below its class reference (a public
// figure from another tool and setup: never a failure on its own).
void add_baseline_summary(const SectionInputs& in, AcceptResult& out) {
  if (!in.options.history) return;
  const History& h = *in.options.history;
  results::AcceptBaseline b{.source = h.source,
                            .drop_pct = in.options.history_thresholds.drop_pct,
                            .noise_k = in.options.history_thresholds.noise_k,
                            .reference = h.reference ? h.reference->name : "",
                            .links_known = 0,
                            .links_below = 0,
                            .links_below_reference = 0};
  for (const LinkVerdict& v : in.report.links) {
    if (!v.link.history) continue;
    const HistoryFinding& f = *v.link.history;
    b.links_known += f.known ? 1 : 0;
    b.links_below += f.below ? 1 : 0;
    if (f.below_reference) {
      ++b.links_below_reference;
      out.warnings.push_back(fmt::format("link rank {} ({}) <-> rank {} ({}): {}", v.link.rank_a,
                                         v.link.host_a, v.link.rank_b, v.link.host_b,
                                         f.reference_reason));
    }
  }
  if (b.links_known < static_cast<int>(in.report.links.size())) {
    out.warnings.push_back(fmt::format(
        "baseline {}: {} of the {} links measured are not in it (other hosts or NICs): judged "
        "without a baseline",
        h.source, static_cast<int>(in.report.links.size()) - b.links_known,
        in.report.links.size()));
  }
  out.section.baseline = b;
}

// The whole phase's counters per host NIC: a flap fails the run (a flap between rows, or on a
// host sitting its round out, is in no link's rows); errors and congestion are warnings (the
// links carry the failing error verdicts; the phase also holds the bootstrap's own traffic).
bool judge_phase_counters(const SectionInputs& in, AcceptResult& out) {
  if (in.phase_nics == nullptr || !in.options.nic_counters) return true;
  const CounterThresholds& t = in.options.counter_thresholds;
  out.section.counter_thresholds = results::AcceptCounterThresholds{
      t.max_link_errors, t.max_retransmit_ppm, t.min_retransmits, t.congestion_finding_pct};
  out.section.nic_counters = *in.phase_nics;
  bool pass = true;
  std::map<std::string, int> hosts_per_scope;  // TCP counters shared by emulated hosts
  for (const fabric::NicDelta& nic : *in.phase_nics) {
    if (!nic.scope.empty()) ++hosts_per_scope[nic.scope];
  }
  for (const fabric::NicDelta& nic : *in.phase_nics) {
    if (!nic.scope.empty() && hosts_per_scope[nic.scope] > 1) continue;
    const CounterFindings f = judge_counters({nic}, t);
    if (f.flapped) {
      pass = false;
      out.failures.push_back(
          fmt::format("NIC flapped during the all-pairs phase: {}", f.flaps_text));
    }
    if (f.errors)
      out.warnings.push_back(
          fmt::format("NIC errors during the all-pairs phase: {}", f.errors_text));
    if (f.congested) {
      out.warnings.push_back(
          fmt::format("NIC congestion during the all-pairs phase: {}", f.congestion_text));
    }
    if (nic.vanished) {
      out.warnings.push_back(
          fmt::format("NIC {} {} vanished during the all-pairs phase", nic.host, nic.nic));
    }
  }
  return pass;
}

// The failed links' lines and the hosts' section: culprit hosts first (their links are theirs),
// then NICs slow with every partner, then the other failed links.
void add_link_failures(const SectionInputs& in, AcceptResult& out) {
  const AcceptReport& report = in.report;
  results::Acceptance& section = out.section;
  std::map<std::string, bool> culprit;
  for (const auto& h : report.hosts) {
    culprit[h.host] = h.culprit;
    section.hosts.push_back(
        results::AcceptHost{h.host, h.links, h.failed_links, h.culprit, h.pass, h.reason});
    if (h.culprit) {
      std::vector<double> own;
      for (const auto& v : report.links) {
        if (v.link.host_a == h.host || v.link.host_b == h.host) own.push_back(v.link.measured_gbps);
      }
      out.failures.push_back(fmt::format(
          "host {}: {} (its links' median {}, the fabric's median {}{})", h.host, h.reason,
          rate(median_of(own)), rate(report.median_gbps),
          report.links.empty() || report.links[0].link.expected_gbps <= 0
              ? ""
              : fmt::format(", expected {}", rate(report.links[0].link.expected_gbps))));
    }
  }
  // NICs slow with every partner on their rail (accept/localize.hpp): one line each, and their
  // links are theirs, as a culprit host's are.
  const std::vector<int> rail = local_indices(in.hosts_by_rank);
  auto rail_of = [&](int rank) {
    return rank >= 0 && static_cast<std::size_t>(rank) < rail.size()
               ? rail[static_cast<std::size_t>(rank)]
               : 0;
  };
  std::map<std::string, int> host_index;
  std::vector<std::string> host_names;
  std::vector<RailLink> rail_links;
  for (const auto& v : report.links) {
    for (const std::string* h : {&v.link.host_a, &v.link.host_b}) {
      if (host_index.emplace(*h, static_cast<int>(host_names.size())).second) {
        host_names.push_back(*h);
      }
    }
    rail_links.push_back(RailLink{host_index[v.link.host_a], rail_of(v.link.rank_a),
                                  host_index[v.link.host_b], rail_of(v.link.rank_b), !v.pass});
  }
  const Localisation located = localize(rail_links);
  std::set<std::pair<int, int>> slow_nic;
  for (const SlowNic& n : located.slow_nics) {
    const std::string& host = host_names[static_cast<std::size_t>(n.host)];
    if (culprit[host]) continue;
    slow_nic.insert({n.host, n.nic});
    out.failures.push_back(fmt::format(
        "NIC {} local rank {}: all {} of its links (to {} hosts) failed, its partners' other "
        "links passed: this NIC or its rail is slow",
        host, n.nic, n.links, n.partners));
  }
  for (std::size_t i = 0; i < report.links.size(); ++i) {
    const LinkVerdict& v = report.links[i];
    if (v.pass || culprit[v.link.host_a] || culprit[v.link.host_b]) continue;
    if (slow_nic.count({rail_links[i].host_a, rail_links[i].nic_a}) > 0 ||
        slow_nic.count({rail_links[i].host_b, rail_links[i].nic_b}) > 0) {
      continue;
    }
    out.failures.push_back(fmt::format(
        "link rank {} ({}) <-> rank {} ({}): {}{}", v.link.rank_a, v.link.host_a, v.link.rank_b,
        v.link.host_b, v.reason,
        v.link.attempts > 1 ? fmt::format(" (best of {} attempts)", v.link.attempts) : ""));
  }
}

// The all-reduce's #wrong and stalls, the straggler, and the fault hooks; false when any of them
// fails the verdict.
bool judge_allreduce_and_hooks(const SectionInputs& in, AcceptResult& out) {
  results::Acceptance& section = out.section;
  bool pass = true;
  if (in.allreduce_rows != nullptr) {
    section.allreduce = results::AcceptAllreduce{in.allreduce_rows->size(), in.allreduce_wrong};
    if (in.allreduce_wrong > 0) {
      pass = false;
      out.failures.push_back(fmt::format(
          "all-reduce: {} wrong elements in total (data corrupted on some path; see the "
          "collectives rows' #wrong)",
          in.allreduce_wrong));
    }
    for (const auto& r : *in.allreduce_rows) {
      for (const auto& st : r.stalls) {
        out.warnings.push_back(fmt::format("all-reduce {} {}: iteration {} stalled {:.3f} s",
                                           r.algorithm, units::format_size(r.size_bytes),
                                           st.iteration, st.time_us * 1e-6));
      }
    }
  }
  if (in.stragglers) {
    section.stragglers = stragglers_section(*in.stragglers, *in.allreduce_rows);
    if (in.stragglers->straggler) {
      pass = false;
      out.failures.push_back("straggler: " + in.stragglers->reason);
    }
  }
  const int ranks = static_cast<int>(in.hosts_by_rank.size());
  apply_fault_hooks_to_verdict(in.options.fault_hooks, ranks, pass, out.failures);
  for (const auto& h : in.options.fault_hooks)
    section.fault_hooks.push_back(describe_fault_hook(h, ranks));
  return pass;
}

}  // namespace

AcceptResult build_section(const SectionInputs& in) {
  AcceptResult out;
  const AcceptReport& report = in.report;
  bool pass = report.pass && in.preflight.pass();

  add_preflight_messages(in, out);

  results::Acceptance& section = out.section;
  section.links = link_sections(in);

  add_link_failures(in, out);

  for (const auto& n : nic_verdicts(in)) {
    const bool nic_culprit = n.links >= 2 && n.failed_links == n.links;
    section.nics.push_back(results::AcceptNic{n.host, n.nic, n.links, n.failed_links, nic_culprit,
                                              n.failed_links == 0});
  }

  section.transport = in.transport;  // resolved by the runner: never kAuto
  section.thresholds = thresholds_section(in.options);
  section.expect_line_gbit = in.options.expect_line_gbit;
  section.preflight = preflight_section(in.preflight);
  section.median_gbps = report.median_gbps;
  section.mad_gbps = report.mad_gbps;
  section.median_latency_us = report.median_latency_us;
  section.retest_rounds = in.retests;
  section.notes = in.links.notes;
  if (in.pairs != nullptr) {
    // The pairing (mode, seed, rounds): what a rerun needs to measure the same pairs.
    section.notes.push_back(in.pairs->description);
    if (!in.pairs->rail_to_rail && in.pairs->hosts >= 2) {
      out.warnings.push_back(
          "pairs: the hosts hold different numbers of ranks, so ranks are paired, not rails "
          "(a pair may cross rails); run the same number of ranks on every host");
    }
  }
  if (report.links.empty()) {
    out.warnings.push_back(
        "no link between two hosts was measured (every rank runs on one host): the verdict "
        "covers the all-reduce only; run one rank per host under srun/mpirun");
  }

  add_baseline_summary(in, out);
  if (!judge_phase_counters(in, out)) pass = false;
  if (in.patterns != nullptr && !add_pattern_verdicts(*in.patterns, out)) pass = false;
  if (!judge_allreduce_and_hooks(in, out)) pass = false;
  section.pass = pass;
  out.pass = pass;
  return out;
}

}  // namespace ibscope::accept
