// Measured vs fitted: the piecewise alpha-beta fit of every curve and link (model/
// results_fits.hpp, as `ibscope fit` computes it) drawn over the measured medians.
#include <fmt/format.h>

#include <map>

#include "ibscope/core/units.hpp"
#include "ibscope/model/results_fits.hpp"
#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

constexpr std::size_t kMaxCurves = 8;  // per chart: a measured and a fitted series each

struct Curve {
  std::string name;
  const model::CurveFit* fit = nullptr;
};

std::string size_text(double bytes) {
  return units::format_size(static_cast<std::uint64_t>(bytes));
}

std::string fit_chart(const std::string& id, const std::string& title, const std::string& x_label,
                      const std::vector<Curve>& curves) {
  LineChart c{
      id, title, Axis{x_label, AxisScale::kLog2, true}, Axis{"time (us)", AxisScale::kLog10, false},
      {}, {}};
  for (std::size_t k = 0; k < curves.size() && k < kMaxCurves; ++k) {
    const model::CurveFit& f = *curves[k].fit;
    Series measured{curves[k].name + " measured", f.bytes, {}, false, false, static_cast<int>(k)};
    Series fitted{curves[k].name + " fitted", f.bytes, {}, true, false, static_cast<int>(k)};
    for (double t : f.measured_s) measured.y.push_back(t * 1e6);
    for (double t : f.fitted_s) fitted.y.push_back(t * 1e6);
    c.series.push_back(std::move(measured));
    c.series.push_back(std::move(fitted));
  }
  std::string caption =
      "Dots: the median time per size; lines: the piecewise fit t = alpha + n / bw (breaks "
      "where the protocol changes; docs/model.md).";
  if (curves.size() > kMaxCurves) {
    caption += fmt::format(" {} more curves not drawn (in the table).", curves.size() - kMaxCurves);
  }
  return figure(render_svg(c), caption);
}

void add_segments(std::vector<std::vector<std::string>>& rows, const std::string& name,
                  const model::CurveFit& f) {
  for (std::size_t k = 0; k < f.segments.size(); ++k) {
    const auto& s = f.segments[k];
    rows.push_back({k == 0 ? name : "",
                    fmt::format("{}..{}", size_text(s.min_bytes), size_text(s.max_bytes)),
                    fmt::format("{:.3f}", s.alpha_s * 1e6),
                    s.bw_gbps > 0 ? fmt::format("{:.4g}", s.bw_gbps) : "-",
                    fmt::format("{:.4f}", s.r2), fmt::format("{:.1f}", s.max_abs_residual_pct)});
  }
}

}  // namespace

Section fits_section(const std::vector<ReportFile>& files) {
  Section s{"fits", "Measured vs fitted (alpha-beta)", "", ""};
  model::FitReport report;
  for (const auto& f : files) model::fit_results(f.doc, f.label, {}, report);

  std::vector<std::string> order;
  std::map<std::string, std::vector<Curve>> charts;
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](const std::string& chart, Curve c) {
    if (!charts.count(chart)) order.push_back(chart);
    charts[chart].push_back(std::move(c));
  };
  for (const auto& c : report.curves) {
    const std::string name = (files.size() > 1 ? c.source + ": " : "") + c.key.id();
    add(c.key.collective, {name, &c.fit});
    add_segments(rows, name, c.fit);
  }
  for (const auto& l : report.links) {
    const std::string name =
        fmt::format("{}{} {}", files.size() > 1 ? l.source + ": " : "", l.id(), l.transport);
    add(l.kind + "-" + l.test, {name, &l.fit});
    add_segments(rows, name, l.fit);
  }
  for (const auto& chart : order) {
    const auto& curves = charts[chart];
    const bool window = chart == "p2p-bw" || chart == "p2p-bibw";
    s.html += fit_chart("fit-" + chart, chart + ": measured vs fitted",
                        window ? "window size (bytes)" : "message size (bytes)", curves);
  }
  if (!rows.empty()) {
    s.html += table(
        {"curve", "sizes (bytes)", "alpha (us)", "bw (GB/s)", "r2", "worst residual (%)"}, rows);
  }
  std::string notes;
  for (const auto& n : report.notes) notes += "<li>" + xml_escape(n) + "</li>";
  if (!notes.empty()) s.html += "<ul class=\"notes\">" + notes + "</ul>";
  if (report.curves.empty() && report.links.empty()) {
    s.note = "Nothing to fit: no curve or link with 3 sizes or more in these files.";
    s.html.clear();
  }
  return s;
}

}  // namespace ibscope::output::report
