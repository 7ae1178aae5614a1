// The report's "why" section (docs/counters.md): for every link that failed or whose NIC
// counters moved beyond traffic, what the counters say; per host, how the traffic of the run
// spread over its NICs (rail balance), from the acceptance phase's counters or else the rows'.

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ibscope/fabric/counters.hpp"
#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

using fabric::CounterKind;

// "h3 mlx5_2:1: symbol_error +17; h7 tcp: RetransSegs +1,081": every non-traffic counter that
// moved, per NIC.
std::string moved_counters(const std::vector<fabric::NicDelta>& nics) {
  std::string out;
  for (const auto& n : nics) {
    std::string own;
    for (const CounterKind k : {CounterKind::kErrors, CounterKind::kFlaps, CounterKind::kCongestion,
                                CounterKind::kOther}) {
      const std::string d = n.describe(k);
      if (!d.empty()) own += (own.empty() ? "" : ", ") + d;
    }
    if (!own.empty())
      out += fmt::format("{}{} {}: {}", out.empty() ? "" : "; ", n.host, n.nic, own);
  }
  return out.empty() ? "none" : out;
}

std::string why_links(const ReportFile& f) {
  std::vector<std::vector<std::string>> rows;
  for (const results::AcceptLink& l : f.doc.acceptance->links) {
    if (l.counters.empty()) continue;  // counters not read in this run
    const bool moved = l.counter_errors || l.flapped || l.congestion_pct > 0;
    if (l.pass && !moved) continue;
    rows.push_back({fmt::format("{} <-> {}", l.host_a, l.host_b),
                    fmt::format("{:.4g}", l.measured_gbps), l.pass ? "pass" : "FAIL", l.counters,
                    moved_counters(l.nic_counters)});
  }
  if (rows.empty()) {
    return paragraph(fmt::format(
        "{}: no link failed and no link's NIC counters moved beyond traffic.", f.label));
  }
  return table({"link (hosts)", "measured (GB/s)", "verdict", "what the counters say",
                "counters that moved (host NIC: counter +growth)"},
               rows);
}

// Per host: each NIC's share of the traffic over the run. A NIC moving under 10 % of the
// median of its host's NICs of the same driver (at least two) is marked: an idle rail.
std::string rail_balance(const std::string& label, const std::vector<fabric::NicDelta>& nics) {
  std::map<std::string, std::vector<const fabric::NicDelta*>> by_host;
  for (const auto& n : nics) by_host[n.host].push_back(&n);
  std::vector<std::vector<std::string>> rows;
  for (const auto& [host, list] : by_host) {
    std::map<std::string, std::vector<double>> by_driver;
    for (const auto* n : list) {
      if (n->driver != "tcp")
        by_driver[n->driver].push_back(static_cast<double>(n->traffic_bytes()));
    }
    for (const auto* n : list) {
      if (n->driver == "tcp") continue;  // the namespace's TCP is no NIC
      auto peers = by_driver[n->driver];
      std::sort(peers.begin(), peers.end());
      const double median = peers.empty() ? 0 : peers[peers.size() / 2];
      const double bytes = static_cast<double>(n->traffic_bytes());
      const bool idle = peers.size() >= 2 && median > 0 && bytes < 0.1 * median;
      rows.push_back({host, n->nic, fmt::format("{:.3f}", bytes / 1e6),
                      median > 0 ? fmt::format("{:.0f}", 100 * bytes / median) : "",
                      fmt::format("{}", n->sum(CounterKind::kErrors)),
                      fmt::format("{}", n->sum(CounterKind::kCongestion)),
                      fmt::format("{}", n->sum(CounterKind::kFlaps)), idle ? "idle rail?" : ""});
    }
  }
  if (rows.empty()) return "";
  return paragraph(fmt::format("{}: traffic per NIC over the run (rail balance).", label)) +
         table({"host", "NIC", "traffic (MB)", "of its host's median NIC (%)", "errors",
                "congestion", "flaps", "note"},
               rows);
}

}  // namespace

Section why_section(const std::vector<ReportFile>& files) {
  Section s{"why", "Why: NIC counters behind the figures", "", ""};
  for (const ReportFile& f : files) {
    std::vector<fabric::NicDelta> run;
    if (f.doc.acceptance && !f.doc.acceptance->nic_counters.empty()) {
      run = f.doc.acceptance->nic_counters;
    } else {
      for (const auto& r : f.doc.collectives.rows)
        run = fabric::add_deltas(std::move(run), r.nic_counters);
      for (const auto& r : f.doc.p2p.rows) run = fabric::add_deltas(std::move(run), r.nic_counters);
    }
    if (f.doc.acceptance && f.doc.acceptance->counter_thresholds) s.html += why_links(f);
    s.html += rail_balance(f.label, run);
  }
  if (s.html.empty()) {
    s.note =
        "No NIC counters in these files (runs with --no-nic-counters, or written before "
        "ibscope read them).";
  }
  return s;
}

}  // namespace ibscope::output::report
