// The comparison section of `ibscope compare --report` (output/report_sections.hpp): what was
// compared with what, the rule, the verdict, and the rows outside their noise band; the
// curves section of the same page overlays the two runs on shared axes.

#include <fmt/format.h>

#include "ibscope/core/units.hpp"
#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

std::string verdict_text(const model::RowComparison& r) {
  switch (r.change) {
    case model::RowChange::kNoise:
      return "noise";
    case model::RowChange::kFaster:
      return "faster";
    case model::RowChange::kSlower:
      return r.beyond_threshold ? "SLOWER (beyond the threshold)" : "slower";
  }
  return "?";
}

}  // namespace

Section comparison_section(const std::vector<ReportFile>& files, const model::RunComparison& c) {
  Section s{"comparison", "Comparison: B against A", "", ""};
  const std::string a = files.empty() ? "A" : files[0].label;
  const std::string b = files.size() < 2 ? "B" : files[1].label;
  const int failures = c.failures();
  s.html += paragraph(fmt::format(
      "A = {}, B = {}. {} row(s) matched ({} only in A, {} only in B): {} within noise, {} "
      "slower, {} faster. {}",
      a, b, c.rows.size(), c.only_a, c.only_b, c.count(model::RowChange::kNoise),
      c.count(model::RowChange::kSlower), c.count(model::RowChange::kFaster),
      failures > 0 ? fmt::format("REGRESSION: {} row(s) slower beyond the threshold.", failures)
                   : "No regression beyond the threshold."));
  s.html += paragraph(
      "change = (t_B - t_A) / t_A of the median time per call; a row is slower or faster when "
      "the ratio leaves its noise band, max(floor, 3 x the robust spread of both rows' "
      "samples, 1.4826 MAD / median). The curves below overlay the two runs (docs/model.md, "
      "\"Comparing runs\").");
  for (const auto& n : c.notes) s.html += paragraph("Note: " + n);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows) {
    if (r.change == model::RowChange::kNoise) continue;
    rows.push_back(
        {r.key, units::format_size(r.size_bytes), fmt::format("{:.2f}", r.a_us),
         fmt::format("{:.2f}", r.b_us), fmt::format("{:+.1f}", r.change_pct),
         r.a_bw_gbps > 0 && r.b_bw_gbps > 0 ? fmt::format("{:+.1f}", r.bw_change_pct) : "-",
         fmt::format("{:.1f}", r.band_pct), verdict_text(r)});
  }
  if (rows.empty()) {
    s.html += paragraph("Every matched row is within its noise band.");
  } else {
    s.html +=
        table({"row", "size", "A (us)", "B (us)", "time %", "busbw %", "band %", "verdict"}, rows);
  }
  return s;
}

}  // namespace ibscope::output::report
