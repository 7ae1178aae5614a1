#include "ibscope/output/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <tuple>
#include <utility>

#include "ibscope/core/units.hpp"

namespace ibscope::output {
namespace {

// Colour-blind-safe palette (Okabe-Ito, then Tableau); series cycle through it.
constexpr const char* kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00",
                                    "#56b4e9", "#000000", "#8c564b", "#7f7f7f", "#bcbd22"};
constexpr int kPaletteSize = static_cast<int>(std::size(kPalette));

constexpr double kWidth = 860, kPlotHeight = 320;
constexpr double kLeft = 80, kRight = 20, kTop = 40, kBottom = 56;
constexpr double kLegendLine = 18;

const char* colour(int index) {
  return kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize];
}

bool is_log(AxisScale s) { return s != AxisScale::kLinear; }

std::string number_text(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6 || a < 1e-3) return fmt::format("{:.3g}", v);
  return fmt::format("{:g}", std::round(v * 1e4) / 1e4);
}

std::string tick_text(const Axis& axis, double v) {
  if (axis.bytes && v >= 1 && v < 1.8e19) {
    return units::format_size(static_cast<std::uint64_t>(std::llround(v)));
  }
  return number_text(v);
}

// Maps data values to pixels along one axis.
struct Scale {
  AxisScale kind = AxisScale::kLinear;
  double lo = 0, hi = 1;    // data range shown
  double from = 0, to = 1;  // pixels
  double t(double v) const { return is_log(kind) ? std::log10(v) : v; }
  double px(double v) const {
    const double a = t(lo), b = t(hi);
    const double f = b > a ? (t(v) - a) / (b - a) : 0.5;
    return from + f * (to - from);
  }
};

// Pads the range so the data does not touch the frame, and widens a degenerate one.
std::pair<double, double> padded(AxisScale s, double lo, double hi) {
  if (is_log(s)) {
    if (hi <= lo) return {lo / 2, hi * 2};
    return {lo / std::pow(hi / lo, 0.03), hi * std::pow(hi / lo, 0.03)};
  }
  if (hi <= lo)
    return {lo - (lo == 0 ? 1 : std::fabs(lo) / 2), hi + (hi == 0 ? 1 : std::fabs(hi) / 2)};
  const double pad = (hi - lo) * 0.03;
  return {lo - pad, hi + pad};
}

std::string svg_open(const std::string& id, double height, const std::string& title) {
  return fmt::format(
      "<svg class=\"chart\" data-chart=\"{0}\" "
      "width=\"{1:.0f}\" height=\"{2:.0f}\" viewBox=\"0 0 {1:.0f} {2:.0f}\" role=\"img\">"
      "<title>{3}</title>"
      "<text class=\"chart-title\" x=\"{4:.0f}\" y=\"22\" font-size=\"15\" "
      "font-weight=\"bold\">{3}</text>",
      xml_escape(id), kWidth, height, xml_escape(title), kLeft);
}

std::string axis_label_x(const std::string& label, double y) {
  return fmt::format(
      "<text class=\"axis-label\" data-axis=\"x\" x=\"{:.1f}\" y=\"{:.1f}\" "
      "text-anchor=\"middle\" font-size=\"13\">{}</text>",
      kLeft + (kWidth - kLeft - kRight) / 2, y, xml_escape(label));
}

std::string axis_label_y(const std::string& label) {
  const double cy = kTop + kPlotHeight / 2;
  return fmt::format(
      "<text class=\"axis-label\" data-axis=\"y\" x=\"18\" y=\"{0:.1f}\" "
      "transform=\"rotate(-90 18 {0:.1f})\" text-anchor=\"middle\" font-size=\"13\">{1}</text>",
      cy, xml_escape(label));
}

std::string frame() {
  return fmt::format(
      "<rect class=\"frame\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"none\" stroke=\"#444\"/>",
      kLeft, kTop, kWidth - kLeft - kRight, kPlotHeight);
}

std::string no_data(double y) {
  return fmt::format(
      "<text class=\"no-data\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
      "font-size=\"14\" fill=\"#888\">no data</text>",
      kLeft + (kWidth - kLeft - kRight) / 2, y);
}

std::string legend_entry(double y, const std::string& name, const char* fill, bool dashed,
                         bool marker_only) {
  std::string swatch =
      marker_only
          ? fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>", kLeft + 14,
                        y - 4, fill)
          : fmt::format(
                "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                "stroke=\"{}\" stroke-width=\"2.5\"{}/>",
                kLeft, y - 4, kLeft + 28, y - 4, fill, dashed ? " stroke-dasharray=\"6 4\"" : "");
  return fmt::format(
      "<g class=\"legend-entry\">{}<text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\" "
      "font-size=\"12\">{}</text></g>",
      swatch, kLeft + 36, y, xml_escape(name));
}

// Vertical grid lines with their tick labels below the plot, one per tick of `axis`.
std::string x_grid(const Axis& axis, const Scale& sx) {
  std::string out;
  for (const auto& t : axis_ticks(axis, sx.lo, sx.hi)) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#e4e4e4\"/><text class=\"tick\" data-axis=\"x\" x=\"{0:.1f}\" y=\"{3:.1f}\" "
        "text-anchor=\"middle\" font-size=\"11\">{4}</text>",
        sx.px(t.value), kTop, kTop + kPlotHeight, kTop + kPlotHeight + 16, xml_escape(t.label));
  }
  return out;
}

// Horizontal grid lines with their tick labels left of the plot.
std::string y_grid(const Axis& axis, const Scale& sy) {
  std::string out;
  for (const auto& t : axis_ticks(axis, sy.lo, sy.hi)) {
    const double py = sy.px(t.value);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" "
        "stroke=\"#e4e4e4\"/><text class=\"tick\" data-axis=\"y\" x=\"{3:.1f}\" y=\"{4:.1f}\" "
        "text-anchor=\"end\" font-size=\"11\">{5}</text>",
        kLeft, py, kWidth - kRight, kLeft - 6, py + 4, xml_escape(t.label));
  }
  return out;
}

double tick_step_linear(double span) {
  const double raw = span / 6;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

namespace {
std::vector<Tick> linear_ticks_of(Axis axis, double lo, double hi) {
  axis.scale = AxisScale::kLinear;
  return axis_ticks(axis, lo, hi);
}
}  // namespace

std::vector<Tick> axis_ticks(const Axis& axis, double lo, double hi) {
  std::vector<Tick> ticks;
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  if (axis.scale == AxisScale::kLinear) {
    const double step = hi > lo ? tick_step_linear(hi - lo) : 1;
    // Multiples of the step, not a running sum, so 0.6 does not become 0.6000000000000001.
    for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; ++k) {
      const double v = k == 0 ? 0 : k * step;
      ticks.push_back({v, tick_text(axis, v)});
    }
    return ticks;
  }
  if (lo <= 0) return ticks;
  if (axis.scale == AxisScale::kLog2) {
    const int a = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
    const int b = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    // A step of 1, 2, 5, 10, 20 ... powers, anchored at multiples of it, so ticks land on
    // 1 KiB, 1 MiB ... whenever they can.
    int every = 1;
    for (int m = 1; (b - a) > 10 * every; m *= 10) {
      for (int f : {1, 2, 5, 10}) {
        every = f * m;
        if ((b - a) <= 10 * every) break;
      }
    }
    for (int k = a; k <= b; ++k) {
      if (((k % every) + every) % every == 0) {
        const double v = std::ldexp(1.0, k);
        ticks.push_back({v, tick_text(axis, v)});
      }
    }
    return ticks.size() >= 2 ? ticks : linear_ticks_of(axis, lo, hi);
  }
  const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool fine = std::log10(hi / lo) <= 1.5;
  const int every = std::max(1, (b - a + 9) / 10);
  for (int k = a; k <= b; ++k) {
    const double decade = std::pow(10.0, k);
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * decade;
      if (m == 1 && k % every != 0) continue;
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back({v, tick_text(axis, v)});
    }
  }
  // A range inside one decade (3.9 .. 4.1 GB/s) holds no 1-2-5 value: round linear steps.
  return ticks.size() >= 2 ? ticks : linear_ticks_of(axis, lo, hi);
}

std::string render_svg(const LineChart& c) {
  // The plottable points: finite, and > 0 on a log axis.
  const auto ok = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!is_log(c.x.scale) || x > 0) &&
           (!is_log(c.y.scale) || y > 0);
  };
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : c.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!ok(s.x[i], s.y[i])) continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  }
  const bool have_points = xlo <= xhi;
  for (const auto& r : c.references) {
    if (!std::isfinite(r.y) || (is_log(c.y.scale) && r.y <= 0)) continue;
    ylo = std::min(ylo, r.y);
    yhi = std::max(yhi, r.y);
  }
  if (!is_log(c.y.scale) && ylo > 0 && ylo <= yhi) ylo = 0;  // linear y starts at zero

  const double legend_h = kLegendLine * static_cast<double>(c.series.size() + c.references.size());
  const double height = kTop + kPlotHeight + kBottom + legend_h + 10;
  std::string out = svg_open(c.id, height, c.title);
  out += frame();
  out += axis_label_x(c.x.label, kTop + kPlotHeight + 40);
  out += axis_label_y(c.y.label);

  Scale sx{c.x.scale, 0, 1, kLeft, kWidth - kRight};
  Scale sy{c.y.scale, 0, 1, kTop + kPlotHeight, kTop};
  if (have_points) {
    std::tie(sx.lo, sx.hi) = padded(c.x.scale, xlo, xhi);
    std::tie(sy.lo, sy.hi) = padded(c.y.scale, ylo, yhi);
    if (!is_log(c.y.scale) && ylo >= 0) sy.lo = std::max(0.0, sy.lo);
    out += x_grid(c.x, sx);
    out += y_grid(c.y, sy);
  } else {
    out += no_data(kTop + kPlotHeight / 2);
  }

  double legend_y = kTop + kPlotHeight + kBottom + kLegendLine - 4;
  for (const auto& r : c.references) {
    const bool drawable = have_points && std::isfinite(r.y) && (!is_log(c.y.scale) || r.y > 0);
    if (drawable) {
      const double py = sy.px(r.y);
      out += fmt::format(
          "<line class=\"reference\" data-reference=\"{0}\" data-value=\"{1}\" x1=\"{2:.1f}\" "
          "y1=\"{3:.1f}\" x2=\"{4:.1f}\" y2=\"{3:.1f}\" stroke=\"#b00\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"2 3\"/><text class=\"reference-label\" x=\"{4:.1f}\" "
          "y=\"{5:.1f}\" text-anchor=\"end\" font-size=\"11\" fill=\"#b00\">{0}</text>",
          xml_escape(r.label), r.y, kLeft, py, kWidth - kRight - 4, py - 4);
    }
    out += fmt::format(
        "<g class=\"legend-entry\"><line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" "
        "y2=\"{1:.1f}\" stroke=\"#b00\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>"
        "<text class=\"legend\" x=\"{3:.1f}\" y=\"{4:.1f}\" font-size=\"12\">{5}</text></g>",
        kLeft, legend_y - 4, kLeft + 28, kLeft + 36, legend_y, xml_escape(r.label));
    legend_y += kLegendLine;
  }

  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    const char* fill = colour(s.color >= 0 ? s.color : static_cast<int>(k));
    std::string d, dots;
    int n = 0;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!ok(s.x[i], s.y[i])) continue;
      const double px = sx.px(s.x[i]), py = sy.px(s.y[i]);
      d += fmt::format("{}{:.1f} {:.1f}", n == 0 ? "M" : " L", px, py);
      dots += fmt::format(
          "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" "
          "fill=\"{}\"/>",
          px, py, s.line ? 2.5 : 3.5, fill);
      ++n;
    }
    out += fmt::format(
        "<g class=\"series-group\"><path class=\"series\" data-series=\"{}\" data-points=\"{}\" "
        "d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}/>{}</g>",
        xml_escape(s.name), n, d, s.line ? fill : "none", s.line ? 2 : 0,
        s.dashed ? " stroke-dasharray=\"6 4\"" : "", dots);
    out += legend_entry(legend_y, n == 0 ? s.name + " (no data)" : s.name, fill, s.dashed, !s.line);
    legend_y += kLegendLine;
  }
  out += "</svg>";
  return out;
}

std::string render_svg(const Heatmap& m) {
  constexpr double kCell = 46, kLabelW = 170, kLabelH = 110;
  const double cols = static_cast<double>(m.columns.size());
  const double rows = static_cast<double>(m.rows.size());
  const double x0 = kLabelW, y0 = kTop + 24;
  const double width = std::max(kWidth, x0 + cols * kCell + 40);
  const double height = y0 + rows * kCell + kLabelH + 50;
  double hi = 0;
  for (const auto& row : m.values) {
    for (const auto& v : row) {
      if (v && std::isfinite(*v)) hi = std::max(hi, *v);
    }
  }
  std::string out = fmt::format(
      "<svg class=\"chart heatmap\" data-chart=\"{0}\" "
      "width=\"{1:.0f}\" height=\"{2:.0f}\" viewBox=\"0 0 {1:.0f} {2:.0f}\" role=\"img\">"
      "<title>{3}</title><text class=\"chart-title\" x=\"{4:.0f}\" y=\"22\" font-size=\"15\" "
      "font-weight=\"bold\">{3}</text>",
      xml_escape(m.id), width, height, xml_escape(m.title), kLeft);
  if (m.rows.empty() || m.columns.empty()) out += no_data(y0 + 40);
  for (std::size_t r = 0; r < m.rows.size(); ++r) {
    const double y = y0 + static_cast<double>(r) * kCell;
    out += fmt::format(
        "<text class=\"row-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" "
        "font-size=\"11\">{}</text>",
        x0 - 6, y + kCell / 2 + 4, xml_escape(m.rows[r]));
    for (std::size_t c = 0; c < m.columns.size(); ++c) {
      const double x = x0 + static_cast<double>(c) * kCell;
      std::optional<double> v;
      if (r < m.values.size() && c < m.values[r].size()) v = m.values[r][c];
      const bool fail = r < m.failing.size() && c < m.failing[r].size() && m.failing[r][c];
      if (!v || !std::isfinite(*v)) {
        out += fmt::format(
            "<rect class=\"cell empty\" data-row=\"{}\" data-col=\"{}\" x=\"{:.1f}\" "
            "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#f2f2f2\" stroke=\"#fff\"/>",
            r, c, x, y, kCell, kCell);
        continue;
      }
      // Darker blue = faster; white text on the dark half.
      const double f = hi > 0 ? std::clamp(*v / hi, 0.0, 1.0) : 0;
      const int shade = static_cast<int>(std::lround(235 - 180 * f));
      out += fmt::format(
          "<rect class=\"cell{}\" data-row=\"{}\" data-col=\"{}\" data-value=\"{}\" x=\"{:.1f}\" "
          "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"rgb({},{},{})\" "
          "stroke=\"{}\" stroke-width=\"{}\"><title>{} / {}: {} {}</title></rect>",
          fail ? " fail" : "", r, c, *v, x, y, kCell, kCell, shade,
          shade + 10 > 255 ? 255 : shade + 10, 255, fail ? "#c00" : "#fff", fail ? 3 : 1,
          xml_escape(m.rows[r]), xml_escape(c < m.columns.size() ? m.columns[c] : ""),
          number_text(*v), xml_escape(m.value_label));
      out += fmt::format(
          "<text class=\"cell-value\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
          "font-size=\"10\" fill=\"{}\">{}</text>",
          x + kCell / 2, y + kCell / 2 + 3, f > 0.55 ? "#fff" : "#000", number_text(*v));
      if (fail) {
        out += fmt::format(
            "<text class=\"fail-mark\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" "
            "fill=\"#c00\" font-weight=\"bold\">&#x2717;</text>",
            x + 3, y + 12);
      }
    }
  }
  for (std::size_t c = 0; c < m.columns.size(); ++c) {
    const double x = x0 + static_cast<double>(c) * kCell + kCell / 2;
    const double y = y0 + rows * kCell + 8;
    out += fmt::format(
        "<text class=\"column-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" transform=\"rotate(45 {0:.1f} "
        "{1:.1f})\" font-size=\"11\">{2}</text>",
        x, y, xml_escape(m.columns[c]));
  }
  const double ly = y0 + rows * kCell + kLabelH;
  out += fmt::format(
      "<text class=\"axis-label\" data-axis=\"x\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"13\">{}"
      "</text><text class=\"axis-label\" data-axis=\"y\" x=\"10\" y=\"{:.1f}\" "
      "font-size=\"13\">{}</text>",
      x0, ly, xml_escape(m.column_axis), y0 - 8, xml_escape(m.row_axis));
  out += fmt::format(
      "<text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\">cell: {} (darker = "
      "higher, max {}); red frame and &#x2717;: failing pair</text></svg>",
      x0, ly + 22, xml_escape(m.value_label), number_text(hi));
  return out;
}

std::string render_svg(const StackedBars& b) {
  double hi = 0;
  for (const auto& bar : b.values) {
    double sum = 0;
    for (double v : bar) sum += std::max(0.0, v);
    hi = std::max(hi, sum);
  }
  const double legend_h = kLegendLine * static_cast<double>(b.segments.size());
  const double height = kTop + kPlotHeight + kBottom + 40 + legend_h;
  std::string out = svg_open(b.id, height, b.title);
  out += frame();
  out += axis_label_y(b.value_label);
  out += axis_label_x(b.bar_axis, kTop + kPlotHeight + 62);
  if (b.bars.empty() || !(hi > 0)) out += no_data(kTop + kPlotHeight / 2);
  const Axis y_axis{b.value_label, AxisScale::kLinear, false};
  const Scale sy{AxisScale::kLinear, 0, hi > 0 ? hi * 1.05 : 1, kTop + kPlotHeight, kTop};
  if (hi > 0) out += y_grid(y_axis, sy);
  const double plot_w = kWidth - kLeft - kRight;
  const double slot = b.bars.empty() ? plot_w : plot_w / static_cast<double>(b.bars.size());
  const double bar_w = std::min(80.0, slot * 0.6);
  for (std::size_t i = 0; i < b.bars.size(); ++i) {
    const double x = kLeft + slot * (static_cast<double>(i) + 0.5) - bar_w / 2;
    const bool mark = i < b.highlighted.size() && b.highlighted[i];
    double base = 0;
    for (std::size_t k = 0; k < b.segments.size(); ++k) {
      const double v =
          i < b.values.size() && k < b.values[i].size() ? std::max(0.0, b.values[i][k]) : 0;
      const double top = sy.px(base + v), bottom = sy.px(base);
      out += fmt::format(
          "<rect class=\"segment\" data-series=\"{0}\" data-bar=\"{1}\" data-value=\"{2}\" "
          "x=\"{3:.1f}\" y=\"{4:.1f}\" width=\"{5:.1f}\" height=\"{6:.1f}\" fill=\"{7}\">"
          "<title>{1}: {0} {8}</title></rect>",
          xml_escape(b.segments[k]), xml_escape(b.bars[i]), v, x, top, bar_w,
          std::max(0.0, bottom - top), colour(static_cast<int>(k)), number_text(v));
      base += v;
    }
    if (mark) {
      out += fmt::format(
          "<rect class=\"highlight\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"none\" stroke=\"#c00\" stroke-width=\"3\"/>",
          x - 3, sy.px(base) - 3, bar_w + 6, sy.px(0) - sy.px(base) + 3);
    }
    out += fmt::format(
        "<text class=\"tick bar-label{}\" data-axis=\"x\" x=\"{:.1f}\" y=\"{:.1f}\" "
        "text-anchor=\"middle\" font-size=\"11\"{}>{}</text>",
        mark ? " highlighted" : "", x + bar_w / 2, kTop + kPlotHeight + 16,
        mark ? " fill=\"#c00\" font-weight=\"bold\"" : "", xml_escape(b.bars[i]));
  }
  double legend_y = kTop + kPlotHeight + kBottom + 40;
  for (std::size_t k = 0; k < b.segments.size(); ++k) {
    out += fmt::format(
        "<g class=\"legend-entry\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\" "
        "fill=\"{}\"/><text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\">{}</text>"
        "</g>",
        kLeft, legend_y - 11, colour(static_cast<int>(k)), kLeft + 22, legend_y,
        xml_escape(b.segments[k]));
    legend_y += kLegendLine;
  }
  out += "</svg>";
  return out;
}

}  // namespace ibscope::output
