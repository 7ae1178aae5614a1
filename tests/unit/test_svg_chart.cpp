// The report's SVG writer (output/svg_chart.hpp): ticks on log and linear axes, escaping of
// text from results files, empty series, heatmap cells and stacked bar segments, and the
// stable attributes the browser test reads.

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "ibscope/output/svg_chart.hpp"

using namespace ibscope;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

std::vector<std::string> labels(const std::vector<output::Tick>& ticks) {
  std::vector<std::string> out;
  for (const auto& t : ticks) out.push_back(t.label);
  return out;
}

}  // namespace

TEST_CASE("log-2 byte axis: ticks at powers of two with binary size labels", "[report]") {
  const output::Axis x{"message size (bytes)", output::AxisScale::kLog2, true};
  const auto ticks = output::axis_ticks(x, 1024, 1 << 20);
  REQUIRE(ticks.size() == 11);  // 2^10 .. 2^20, every power
  for (const auto& t : ticks) CHECK(std::log2(t.value) == std::round(std::log2(t.value)));
  CHECK(ticks.front().label == "1 KiB");
  CHECK(ticks.back().label == "1 MiB");

  // 1 B .. 1 GiB: 31 powers, thinned to every 5th (at most ~10), anchored at 2^0, 2^10 ...
  const auto wide = output::axis_ticks(x, 1, std::ldexp(1.0, 30));
  CHECK(labels(wide) ==
        std::vector<std::string>{"1 B", "32 B", "1 KiB", "32 KiB", "1 MiB", "32 MiB", "1 GiB"});
}

TEST_CASE("log-10 axis: decades, with 2 and 5 inside a single decade", "[report]") {
  const output::Axis y{"busbw (GB/s)", output::AxisScale::kLog10, false};
  CHECK(labels(output::axis_ticks(y, 0.5, 200)) == std::vector<std::string>{"1", "10", "100"});
  CHECK(labels(output::axis_ticks(y, 1.5, 9)) == std::vector<std::string>{"2", "5"});
  CHECK(labels(output::axis_ticks(y, 0.01, 0.3)) ==
        std::vector<std::string>{"0.01", "0.02", "0.05", "0.1", "0.2"});
  CHECK(output::axis_ticks(y, 0, 10).empty());  // no log of zero
}

TEST_CASE("linear axis: round steps covering the range", "[report]") {
  const output::Axis y{"time (s)", output::AxisScale::kLinear, false};
  CHECK(labels(output::axis_ticks(y, 0, 1)) ==
        std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"});
  CHECK(labels(output::axis_ticks(y, 0, 47)) ==
        std::vector<std::string>{"0", "10", "20", "30", "40"});
}

TEST_CASE("text from results files is escaped everywhere", "[report]") {
  const std::string hostile = "<script>alert(1)</script>\"&'";
  CHECK(output::xml_escape(hostile) == "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;");
  CHECK(output::xml_escape(std::string("a\x01"
                                       "b\tc")) == "a?b\tc");

  output::LineChart c{"busbw\"x",
                      hostile,
                      output::Axis{hostile, output::AxisScale::kLog2, true},
                      output::Axis{"busbw (GB/s)", output::AxisScale::kLog10, false},
                      {output::Series{hostile, {1024, 2048}, {1, 2}, true, false, -1}},
                      {output::ReferenceLine{hostile, 3}}};
  const std::string svg = output::render_svg(c);
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg.find("&lt;script&gt;") != std::string::npos);
  CHECK(svg.find("data-chart=\"busbw&quot;x\"") != std::string::npos);

  output::Heatmap m{"pairs", hostile, hostile, hostile, hostile, {hostile}, {hostile}, {{1.0}}, {}};
  CHECK(output::render_svg(m).find("<script") == std::string::npos);
  output::StackedBars b{"step", hostile, hostile, hostile, {hostile}, {hostile}, {{1.0}}, {}};
  CHECK(output::render_svg(b).find("<script") == std::string::npos);
}

TEST_CASE("line chart: series paths with their point counts, axis labels, reference line",
          "[report]") {
  output::LineChart c{"busbw-allreduce",
                      "allreduce",
                      output::Axis{"message size (bytes)", output::AxisScale::kLog2, true},
                      output::Axis{"busbw (GB/s)", output::AxisScale::kLog10, false},
                      {output::Series{"ring", {1024, 2048, 4096}, {0.5, 1, 2}, true, false, -1},
                       // 0 cannot sit on a log axis: that point is left out and not counted.
                       output::Series{"dbt", {0, 2048, 4096}, {1, 1.5, 2.5}, false, true, -1}},
                      {output::ReferenceLine{"line rate 100 Gb/s = 12.5 GB/s", 12.5}}};
  const std::string svg = output::render_svg(c);
  CHECK(svg.find("<svg class=\"chart\" data-chart=\"busbw-allreduce\"") == 0);
  CHECK(svg.find("data-series=\"ring\" data-points=\"3\"") != std::string::npos);
  CHECK(svg.find("data-series=\"dbt\" data-points=\"2\"") != std::string::npos);
  CHECK(svg.find(">busbw (GB/s)</text>") != std::string::npos);
  CHECK(svg.find(">message size (bytes)</text>") != std::string::npos);
  CHECK(count(svg, "class=\"axis-label\"") == 2);
  CHECK(svg.find("class=\"reference\" data-reference=\"line rate 100 Gb/s = 12.5 GB/s\" "
                 "data-value=\"12.5\"") != std::string::npos);
  CHECK(svg.find("no data") == std::string::npos);
}

TEST_CASE("empty series: the chart says no data, the legend names the series", "[report]") {
  output::LineChart c{"latency-x",
                      "x",
                      output::Axis{"message size (bytes)", output::AxisScale::kLog2, true},
                      output::Axis{"time (us)", output::AxisScale::kLog10, false},
                      {output::Series{"ring p50", {}, {}, true, false, -1}},
                      {}};
  const std::string svg = output::render_svg(c);
  CHECK(svg.find("class=\"no-data\"") != std::string::npos);
  CHECK(svg.find("data-points=\"0\"") != std::string::npos);
  CHECK(svg.find("ring p50 (no data)") != std::string::npos);
  CHECK(output::render_svg(output::LineChart{"none", "none", {}, {}, {}, {}}).find("no data") !=
        std::string::npos);
}

TEST_CASE("heatmap: one cell per pair, failing cells marked, missing cells empty", "[report]") {
  output::Heatmap m{"pairs-bw-1",
                    "links",
                    "from rank (host)",
                    "to rank (host)",
                    "measured (GB/s)",
                    {"r0 a", "r1 b", "r2 c"},
                    {"r0 a", "r1 b", "r2 c"},
                    {{std::nullopt, 5.0, 1.0}, {5.0, std::nullopt, 4.0}, {1.0, 4.0, std::nullopt}},
                    {{false, false, true}, {false, false, false}, {true, false, false}}};
  const std::string svg = output::render_svg(m);
  CHECK(count(svg, "<rect class=\"cell") == 9);
  CHECK(count(svg, "class=\"cell empty\"") == 3);
  CHECK(count(svg, "class=\"cell fail\"") == 2);
  CHECK(count(svg, "class=\"fail-mark\"") == 2);
  CHECK(svg.find("data-row=\"0\" data-col=\"2\" data-value=\"1\"") != std::string::npos);
  CHECK(count(svg, "class=\"axis-label\"") == 2);
}

TEST_CASE("stacked bars: one segment per bar and term, highlighted bar framed", "[report]") {
  output::StackedBars b{"step",
                        "step",
                        "time per step (s)",
                        "configuration",
                        {"baseline", "inter-bw=2"},
                        {"compute", "tp", "dp"},
                        {{1.0, 0.2, 0.3}, {1.0, 0.2, 0.1}},
                        {false, true}};
  const std::string svg = output::render_svg(b);
  CHECK(count(svg, "class=\"segment\"") == 6);
  CHECK(count(svg, "data-series=\"compute\"") == 2);
  CHECK(count(svg, "class=\"highlight\"") == 1);
  CHECK(svg.find(">time per step (s)</text>") != std::string::npos);
}
