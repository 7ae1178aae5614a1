// The HTML report's congestion section (ibscope accept --congestion): per file, the victims'
// metrics alone and under each congestor, GPCNet's impact factor and the verdict.
#include <fmt/format.h>

#include <cmath>

#include "report_sections.hpp"

namespace ibscope::output::report {

bool has_congestion(const std::vector<ReportFile>& files) {
  for (const auto& f : files) {
    if (f.doc.acceptance && f.doc.acceptance->congestion) return true;
  }
  return false;
}

Section congestion_section(const std::vector<ReportFile>& files) {
  Section s{"congestion", "Congestion: victims under congestors", "", ""};
  for (const auto& f : files) {
    if (!f.doc.acceptance || !f.doc.acceptance->congestion) continue;
    const results::AcceptCongestion& c = *f.doc.acceptance->congestion;
    s.html += paragraph(fmt::format(
        "{}: {} victim rank(s), {} congestor rank(s); impact = congested/isolated (latency), "
        "isolated/congested (bus bandwidth), GPCNet's impact factor: {}.",
        f.label, c.victim_ranks.size(), c.congestor_ranks, c.pass ? "PASS" : "FAIL"));
    std::vector<std::vector<std::string>> rows;
    for (const auto& i : c.impacts) {
      rows.push_back({i.congestor, i.metric, fmt::format("{:.4g}", i.isolated),
                      fmt::format("{:.4g}", i.congested),
                      std::isnan(i.impact) ? "-" : fmt::format("{:.2f}", i.impact),
                      fmt::format("{:.2f}", i.max_impact), i.pass ? "PASS" : "FAIL"});
    }
    s.html += table({"congestor", "victim metric (unit in the name)", "isolated", "congested",
                     "impact", "max impact", "verdict"},
                    rows);
  }
  return s;
}

}  // namespace ibscope::output::report
