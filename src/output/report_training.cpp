// The training step: the breakdown (model/step_model.hpp) of the baseline and of each what-if
// as stacked bars, the breakdown and what-if tables, and the tiers they stand on.
#include <fmt/format.h>

#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

std::vector<double> terms(const model::StepBreakdown& s) {
  return {s.compute_s, s.tp_s, s.pp_s, s.bubble_s, s.dp_exposed_s};
}

const std::vector<std::string> kTerms = {"compute", "tensor parallel (exposed)",
                                         "pipeline send/recv (exposed)", "pipeline bubble",
                                         "data parallel (exposed)"};

std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.2f}", 100 * part / whole) : "-";
}

// The --scale curve: efficiency against linear scaling and the network's share, in % of the
// step, against node count; then the table.
std::string scaling_html(const TrainingReport& t) {
  LineChart chart;
  chart.id = "scaling";
  chart.title = "scaling: efficiency and network share vs nodes";
  chart.x = {"nodes", AxisScale::kLog2, false};
  chart.y = {"percent (%)", AxisScale::kLinear, false};
  Series efficiency{"efficiency vs linear scaling (%)", {}, {}};
  Series network{"network share of the step (%)", {}, {}};
  std::vector<std::vector<std::string>> rows;
  for (const model::ScaleRow& r : t.scaling) {
    efficiency.x.push_back(r.nodes);
    efficiency.y.push_back(100 * r.efficiency);
    network.x.push_back(r.nodes);
    network.y.push_back(100 * r.step.network_share);
    rows.push_back({std::to_string(r.nodes), std::to_string(r.workload.gpus()),
                    std::to_string(r.workload.dp), std::to_string(r.workload.global_batch),
                    std::to_string(r.step.microbatches), fmt::format("{:.4f}", r.step.step_s),
                    fmt::format("{:.2f}", 100 * r.step.network_share),
                    fmt::format("{:.1f}", r.step.tokens_per_s_per_gpu),
                    fmt::format("{:.1f}", 100 * r.efficiency),
                    r.step.mfu ? fmt::format("{:.1f}", 100 * *r.step.mfu) : "n/a"});
  }
  chart.series = {efficiency, network};
  std::string html = "<h3>Scaling</h3>";
  html += figure(render_svg(chart),
                 fmt::format("t, p and v kept, d follows the nodes; global batch {}. Efficiency: "
                             "tokens/s/GPU over that of the smallest scale (docs/model.md, "
                             "Scaling curves).",
                             t.scale_fixed_batch ? "fixed" : "per scale (--scale-batch)"));
  html += table({"nodes", "GPUs", "dp", "global batch", "micro-batches", "step (s)", "network (%)",
                 "tokens/s/GPU", "efficiency (%)", "MFU (%)"},
                rows);
  return html;
}

}  // namespace

Section training_section(const std::optional<TrainingReport>& training) {
  Section s{"training", "Training step: compute, exposed communication, bubble", "", ""};
  if (!training) {
    s.note =
        "No workload given (ibscope report --preset NAME or --workload FILE adds the "
        "training-step breakdown on the tiers these files measured).";
    return s;
  }
  const TrainingReport& t = *training;
  s.html = paragraph(fmt::format("Workload: {}. Layout: {}.", t.workload, t.layout));
  std::string tiers;
  for (const auto& line : t.tiers) tiers += "<li>" + xml_escape(line) + "</li>";
  if (!tiers.empty()) s.html += "<ul class=\"tiers\">" + tiers + "</ul>";
  if (!t.breakdown) {
    s.html += fmt::format("<p class=\"note missing\">Not computed: {}</p>", xml_escape(t.missing));
    return s;
  }
  if (!t.calibration.empty()) s.html += paragraph(t.calibration);
  const model::StepBreakdown& b = *t.breakdown;
  StackedBars bars{"step",
                   "time per step: baseline and what-ifs",
                   "time per step (s)",
                   "configuration (baseline or what-if)",
                   {"baseline"},
                   kTerms,
                   {terms(b)},
                   {}};
  for (const auto& w : t.what_ifs) {
    bars.bars.push_back(w.label);
    bars.values.push_back(terms(w.changed));
  }
  s.html += figure(render_svg(bars),
                   "Per GPU on the critical path (docs/model.md, Training step). Communication "
                   "that computation hides is not drawn; the data-parallel total is in the "
                   "table.");
  const auto v = terms(b);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < kTerms.size(); ++k) {
    rows.push_back({kTerms[k], fmt::format("{:.4f}", v[k]), pct(v[k], b.step_s)});
  }
  rows.push_back({"data parallel (total, partly hidden)", fmt::format("{:.4f}", b.dp_total_s),
                  pct(b.dp_total_s, b.step_s)});
  rows.push_back({"step", fmt::format("{:.4f}", b.step_s), "100.00"});
  rows.push_back({"network (what an infinitely fast network removes)",
                  fmt::format("{:.4f}", b.network_s), pct(b.network_s, b.step_s)});
  s.html += table({"term", "time (s)", "share of step (%)"}, rows);
  s.html +=
      paragraph(fmt::format("Tokens per second per GPU: {:.1f}. MFU: {}.", b.tokens_per_s_per_gpu,
                            b.mfu ? fmt::format("{:.1f} %", 100 * *b.mfu) : "n/a (no peak)"));
  if (!t.what_ifs.empty()) {
    std::vector<std::vector<std::string>> w_rows;
    for (const auto& w : t.what_ifs) {
      w_rows.push_back({w.label, fmt::format("{:.4f}", w.baseline.step_s),
                        fmt::format("{:.4f}", w.changed.step_s),
                        fmt::format("{:+.2f}", w.change_pct),
                        fmt::format("{:.2f}", 100 * w.changed.network_share),
                        fmt::format("tp{}pp{}dp{}", w.workload.tp, w.workload.pp, w.workload.dp)});
    }
    s.html += "<h3>What if</h3>" + table({"what-if", "baseline step (s)", "changed step (s)",
                                          "change (%)", "network share (%)", "layout"},
                                         w_rows);
  }
  if (!t.scaling.empty()) s.html += scaling_html(t);
  return s;
}

}  // namespace ibscope::output::report
