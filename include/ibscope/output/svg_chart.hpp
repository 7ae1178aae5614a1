#pragma once
/// A small, pure SVG chart writer for the HTML report (output/html_report.hpp): line/scatter
/// charts on linear, log-2 or log-10 axes with tick labels and a legend, horizontal reference
/// lines, heatmaps and stacked bars. Produces strings; no I/O. Every piece of text is
/// XML-escaped, so names taken from results files (hosts, devices) cannot inject markup. The
/// elements are meant to sit inline in HTML (no xmlns: the HTML parser gives the namespace),
/// so the page names no URL at all.
///
/// Stable attributes for tests and tools: `<svg class="chart" data-chart="ID">`; a series is
/// `<path class="series" data-series="NAME" data-points="N">` (points on a log axis that are
/// <= 0 are left out and not counted); axis labels `<text class="axis-label" data-axis="x|y">`;
/// reference lines `<line class="reference" data-reference="LABEL" data-value="Y">`; heatmap
/// cells `<rect class="cell" data-row="R" data-col="C" data-value="V">` (class "cell fail" and
/// a `<text class="fail-mark">` when failing, "cell empty" without a value); stacked bar
/// segments `<rect class="segment" data-series="SEGMENT" data-bar="BAR" data-value="V">`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope::output {

enum class AxisScale { kLinear, kLog2, kLog10 };

struct Axis {
  std::string label;  ///< with its unit, e.g. "busbw (GB/s)"
  AxisScale scale = AxisScale::kLinear;
  bool bytes = false;  ///< tick labels as binary sizes ("4 KiB") instead of numbers
};

struct Series {
  std::string name;       ///< legend text and data-series value
  std::vector<double> x;  ///< pairs with y
  std::vector<double> y;
  bool line = true;  ///< false: markers only (scatter)
  bool dashed = false;
  int color = -1;  ///< palette index; -1: the series' position
};

struct ReferenceLine {
  std::string label;  ///< e.g. "line rate 100 Gb/s = 12.5 GB/s"
  double y = 0;       ///< in the y axis' unit
};

struct LineChart {
  std::string id;  ///< data-chart value
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<ReferenceLine> references;
};

struct Heatmap {
  std::string id;
  std::string title;
  std::string row_axis, column_axis;  ///< e.g. "rank a (host)"
  std::string value_label;            ///< with unit: "measured (GB/s)"
  std::vector<std::string> rows, columns;
  std::vector<std::vector<std::optional<double>>> values;  ///< [row][column]; nullopt: none
  std::vector<std::vector<bool>> failing;                  ///< same shape as values, or empty
};

struct StackedBars {
  std::string id;
  std::string title;
  std::string value_label;                  ///< y axis, with unit: "time per step (s)"
  std::string bar_axis;                     ///< x axis: "configuration"
  std::vector<std::string> bars;            ///< one label per bar
  std::vector<std::string> segments;        ///< one name per segment (legend, data-series)
  std::vector<std::vector<double>> values;  ///< [bar][segment], >= 0
  std::vector<bool> highlighted;            ///< per bar (e.g. the straggler rank), or empty
};

struct Tick {
  double value = 0;
  std::string label;
};

/// Ticks covering [lo, hi] (lo <= hi; on log scales both > 0): powers of two (every 2^k, k
/// chosen for at most ~10 ticks) on kLog2, powers of ten (with 2 and 5 inside a single decade)
/// on kLog10, round steps (1, 2, 5 x 10^k) on kLinear. Labels as binary sizes when
/// `axis.bytes`, else as short numbers ("0.5", "100", "1e+06").
std::vector<Tick> axis_ticks(const Axis& axis, double lo, double hi);

/// Text safe inside XML/HTML text and attribute values: & < > " ' escaped; control characters
/// other than tab and newline replaced by '?'.
std::string xml_escape(std::string_view text);

/// `<svg class="chart" ...>...</svg>`. A chart without any plottable point says "no data".
std::string render_svg(const LineChart& chart);
std::string render_svg(const Heatmap& map);
std::string render_svg(const StackedBars& bars);

}  // namespace ibscope::output
