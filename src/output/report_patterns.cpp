// The HTML report's traffic-pattern section (accept --pattern, run's incast): per file and
// round, the hub, its flows with their rates, the aggregate against what the hub's link should
// carry, Jain's fairness index and the verdict.
#include <fmt/format.h>

#include "report_sections.hpp"

namespace ibscope::output::report {

bool has_patterns(const std::vector<ReportFile>& files) {
  for (const auto& f : files) {
    if (f.doc.acceptance && !f.doc.acceptance->patterns.empty()) return true;
  }
  return false;
}

Section patterns_section(const std::vector<ReportFile>& files) {
  Section s{"patterns", "Traffic patterns: flows at once onto (or from) a hub", "", ""};
  for (const auto& f : files) {
    if (!f.doc.acceptance || f.doc.acceptance->patterns.empty()) continue;
    s.html += paragraph(fmt::format(
        "{}: one row per round (and message size); aggregate = all flows' bytes over the "
        "slowest flow's time, against what the hub's link should carry (- : no expected rate, "
        "fairness only); Jain's index 1 = equal shares, 1/n = one flow takes all.",
        f.label));
    std::vector<std::vector<std::string>> rows;
    for (const results::AcceptPattern& p : f.doc.acceptance->patterns) {
      std::string flows;
      for (const auto& fl : p.flows) {
        flows += fmt::format("{}{}->{} {:.4g}", flows.empty() ? "" : ", ", fl.host_src, fl.host_dst,
                             fl.bw_gbps);
      }
      const bool expected = p.expected_gbps > 0;
      std::string verdict = p.pass ? "PASS" : "FAIL: " + p.reason;
      if (!p.congestion.empty()) verdict += "; " + p.congestion;
      rows.push_back(
          {p.pattern, std::to_string(p.round), p.hub_host.empty() ? "-" : p.hub_host,
           std::to_string(p.size_bytes), std::to_string(p.flows.size()), flows,
           fmt::format("{:.4g}", p.aggregate_gbps),
           expected ? fmt::format("{:.4g}", p.expected_gbps) : "-",
           expected ? fmt::format("{:.1f}", 100 * p.aggregate_gbps / p.expected_gbps) : "-",
           fmt::format("{:.3f}", p.fairness_jain), verdict});
    }
    s.html += table(
        {"pattern", "round", "hub", "size (B)", "flows", "flow rates (GB/s)", "aggregate (GB/s)",
         "link rate (GB/s)", "aggregate / link (%)", "Jain's index", "verdict"},
        rows);
  }
  return s;
}

}  // namespace ibscope::output::report
