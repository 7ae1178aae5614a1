// `ibscope model`: the network's share of a training step (model/step_model.hpp) with what-if
// answers and the sensitivity to inter-node bandwidth. Formulas: docs/model.md.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/cli/workload_flags.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/model/calibration.hpp"
#include "ibscope/model/documents.hpp"
#include "ibscope/model/moe.hpp"
#include "ibscope/model/scaling.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/transformer.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::cli {
namespace {

struct ModelFlags {
  ClusterFlags cluster;
  WorkloadFlags workload;
  std::string json_out;
  std::string scale_csv;
  bool print_workload = false;
};

std::string tier_line(const char* name, const model::Tier& t, bool crossed, bool links) {
  if (!crossed) return fmt::format("# {}: not crossed by this layout\n", name);
  return fmt::format("# {}: {:.2f} us, {:.4g} GB/s{} ({})\n", name, t.latency_s * 1e6, t.bw_gbps,
                     links ? fmt::format(" per link, {} link(s) per node", t.links_per_node)
                           : std::string(" per rank"),
                     t.source.empty() ? "not given" : t.source);
}

void print_header(const model::Workload& w, const model::ClusterNetwork& c,
                  const model::Placement& p) {
  fmt::print("# ibscope model: {}{}\n", w.name,
             w.source.empty() ? "" : fmt::format(" ({})", w.source));
  fmt::print(
      "# layout: tp {} x pp {} x dp {} (vp {}) = {} GPUs on {} node(s) of {}; batch {} "
      "x {} tokens, micro-batch {}, {} micro-batches\n",
      w.tp, w.pp, w.dp, w.vp, w.gpus(), w.nodes(), w.gpus_per_node, w.global_batch, w.seq_len,
      w.micro_batch, w.microbatches());
  fmt::print(
      "# options: recompute {}, sequence parallel {}, distributed optimizer {}, "
      "overlap {}, bucket {:.4g} MB\n",
      model::name_of(w.recompute), w.sequence_parallel ? "on" : "off",
      w.distributed_optimizer ? "on" : "off", model::name_of(w.overlap), w.bucket_bytes / 1e6);
  fmt::print(
      "# groups: TP {} ranks ({} per node), DP {} ranks ({} per node, {} groups per "
      "node), PP boundaries {}\n",
      p.tp.ranks, p.tp.ranks_per_node, p.dp.ranks, p.dp.ranks_per_node, p.dp.concurrent_per_node,
      w.pp == 1 ? "none"
      : p.pp_across_nodes
          ? fmt::format("cross nodes ({} GPUs per node sending)", p.pp_concurrent_per_node)
          : std::string("inside nodes"));
  fmt::print("{}", tier_line("inter-node tier", c.inter, c.nodes > 1, true));
  fmt::print("{}", tier_line("intra-node tier", c.intra, c.gpus_per_node > 1, false));
  if (!w.moe) return;
  const model::Moe& e = *w.moe;
  fmt::print(
      "# moe: {} of {} layers, {} experts, top-{}{}, expert MLP {}, capacity factor {}; EP {} "
      "ranks ({} per node, {} groups per node, {})\n",
      model::moe_layer_count(w), w.layers, e.experts, e.top_k,
      e.shared_experts > 0 ? fmt::format(" + {} shared", e.shared_experts) : std::string(),
      e.expert_ffn_hidden,
      e.capacity_factor ? fmt::format("{:g}", *e.capacity_factor) : std::string("none (dropless)"),
      p.ep.ranks, p.ep.ranks_per_node, p.ep.concurrent_per_node,
      p.ep.ranks > p.ep.ranks_per_node ? "across nodes" : "inside one node");
  const auto alltoall_line = [](const char* name, const std::optional<model::Tier>& t,
                                const std::string& not_fitted) {
    if (t) return tier_line(name, *t, true, false);
    return fmt::format("# {}: none ({})\n", name,
                       not_fitted.empty()
                           ? std::string("no all-to-all rows of the algorithm in --fit")
                           : "not fitted: " + not_fitted);
  };
  fmt::print("{}",
             alltoall_line("all-to-all inter-node", c.alltoall_inter, c.alltoall_inter_not_fitted));
  fmt::print("{}",
             alltoall_line("all-to-all intra-node", c.alltoall_intra, c.alltoall_intra_not_fitted));
}

void print_breakdown(const model::Workload& w, const model::StepBreakdown& s) {
  const auto row = [&](const char* term, double t, const std::string& note) {
    fmt::print("  {:<26} {:>12.4f} {:>9.2f}  {}\n", term, t, 100 * t / s.step_s, note);
  };
  const double layers = static_cast<double>(w.layers) / w.pp;
  fmt::print("# {:<26} {:>12} {:>9}  {}\n", "term", "time(s)", "step(%)", "what");
  row("compute", s.compute_s,
      fmt::format("{} micro-batches, {:.4g} hardware FLOPs per step", s.microbatches,
                  s.hardware_flops));
  row("tensor parallel", s.tp_s,
      w.tp == 1 ? std::string("tp = 1")
                : fmt::format("{} x {:g} layers x {} {} of {:.4g} MB", s.microbatches, layers,
                              model::tp_collectives_per_layer(w),
                              w.sequence_parallel ? "RS+AG" : "all-reduce",
                              model::tp_message_bytes(w) / 1e6));
  row("pipeline send/recv", s.pp_s,
      w.pp == 1 ? std::string("pp = 1")
                : fmt::format("{} x {} sends of {:.4g} MB", s.microbatches,
                              model::pp_sends_per_microbatch(w), model::pp_message_bytes(w) / 1e6));
  if (w.moe) {
    const std::string what =
        fmt::format("{} x {:g} MoE layers x {} all-to-all of {:.4g} MB", s.microbatches,
                    model::moe_layer_count(w) / static_cast<double>(w.pp),
                    model::ep_alltoalls_per_layer(w), s.ep_bytes / 1e6);
    if (s.ep_unpriced) {
      fmt::print("  {:<26} {:>12} {:>9}  {}; NOT COSTED, left out of the step: {}\n",
                 "expert parallel all-to-all", "n/a", "n/a", what, *s.ep_unpriced);
    } else {
      row("expert parallel all-to-all", s.ep_s, what);
    }
  }
  row("pipeline bubble", s.bubble_s,
      fmt::format("(p-1)/(m v) = {:.4f} of compute + tp + pp{}", s.bubble_fraction,
                  w.moe ? " + ep" : ""));
  row("data parallel, exposed", s.dp_exposed_s,
      w.dp == 1 ? std::string("dp = 1")
                : fmt::format("of {:.4f} s for {:.4g} GB per GPU in {} bucket(s), {}", s.dp_total_s,
                              s.dp_bytes_per_gpu / 1e9, s.dp_buckets,
                              w.distributed_optimizer ? "RS grads + AG params" : "all-reduce"));
  row("step", s.step_s, "");
  fmt::print(
      "# tokens/s/GPU {:.1f}; MFU {}; network {:.4f} s = {:.2f} % of the step (what an "
      "infinitely fast network removes){}\n",
      s.tokens_per_s_per_gpu, s.mfu ? fmt::format("{:.1f} %", 100 * *s.mfu) : "n/a (no peak)",
      s.network_s, 100 * s.network_share,
      s.ep_unpriced ? "; without the expert-parallel all-to-alls, which are not costed" : "");
}

void print_scale(const std::vector<model::ScaleRow>& rows, bool fixed_batch) {
  fmt::print("# scaling: tp, pp and vp kept, dp follows the nodes; global batch {}\n",
             fixed_batch ? "fixed" : "from --scale-batch");
  fmt::print("# {:>6} {:>7} {:>6} {:>8} {:>6} {:>12} {:>11} {:>14} {:>14} {:>7}\n", "nodes", "gpus",
             "dp", "batch", "m", "step(s)", "network(%)", "tokens/s/GPU", "efficiency(%)",
             "MFU(%)");
  for (const model::ScaleRow& r : rows) {
    fmt::print("  {:>6} {:>7} {:>6} {:>8} {:>6} {:>12.4f} {:>11.2f} {:>14.1f} {:>14.1f} {:>7}\n",
               r.nodes, r.workload.gpus(), r.workload.dp, r.workload.global_batch,
               r.step.microbatches, r.step.step_s, 100 * r.step.network_share,
               r.step.tokens_per_s_per_gpu, 100 * r.efficiency,
               r.step.mfu ? fmt::format("{:.1f}", 100 * *r.step.mfu) : "n/a");
  }
}

int run_model(const ModelFlags& f) {
  model::Workload w = chosen_workload(f.workload);
  if (f.print_workload) {
    fmt::print("{}\n", model::workload_json_text(w));
    return 0;
  }
  const std::vector<model::WhatIf> what_ifs = model::parse_what_ifs(f.workload.what_if);
  const TrainingOptions options = training_options(f.workload);
  const std::optional<model::Calibration>& calibration = options.calibration;
  const std::vector<int>& scale_nodes = options.scale_nodes;
  const std::map<int, int>& scale_batch = options.scale_batch;
  if (scale_nodes.empty() && !f.scale_csv.empty()) {
    throw UsageError("--scale-csv needs --scale nodes=...");
  }
  const model::ClusterNetwork cluster = chosen_cluster(f.cluster, w);
  const model::NetworkFactory factory = [](const model::ClusterNetwork& c) {
    return model::make_network_model(c);
  };
  std::string calibration_line;
  std::optional<model::CalibrationRecord> calibration_record;
  if (calibration) {
    const model::CalibrationResult r = model::calibrate(w, *factory(cluster), *calibration);
    calibration_line = fmt::format(
        "# calibration: {} {:.6g} s -> achieved_fraction {:.6g} ({:.6g} s of compute per "
        "micro-batch on this layout; modelled step {:.6g} s); used for every answer below\n",
        calibration->kind == model::Calibration::Kind::kStep ? "step" : "micro-batch compute",
        calibration->seconds, r.achieved_fraction, r.compute_s_per_microbatch, r.modelled_step_s);
    w = r.workload;
    calibration_record = model::CalibrationRecord{
        calibration->kind == model::Calibration::Kind::kStep ? "step" : "microbatch",
        calibration->seconds, r.achieved_fraction, r.compute_s_per_microbatch};
  }
  const model::StepBreakdown s = model::model_step(w, *factory(cluster));
  // Every scale is checked before anything is printed: a bad one is one error line.
  const std::vector<model::ScaleRow> rows =
      scale_nodes.empty() ? std::vector<model::ScaleRow>{}
                          : model::scale_curve(w, cluster, scale_nodes, scale_batch, factory);
  print_header(w, cluster, model::place_ranks(w));
  fmt::print("{}", calibration_line);
  print_breakdown(w, s);

  std::vector<model::WhatIfResult> results;
  if (!what_ifs.empty()) {
    fmt::print("# {:<24} {:>12} {:>12} {:>9} {:>9} {:>10}\n", "what-if", "base(s)", "changed(s)",
               "change(%)", "network(%)", "layout");
  }
  for (const auto& q : what_ifs) {
    const model::WhatIfResult r = model::evaluate(q, w, cluster, factory);
    fmt::print("  {:<24} {:>12.4f} {:>12.4f} {:>+9.2f} {:>10.2f} {:>10}\n", r.label,
               r.baseline.step_s, r.changed.step_s, r.change_pct, 100 * r.changed.network_share,
               fmt::format("tp{}pp{}dp{}", r.workload.tp, r.workload.pp, r.workload.dp));
    results.push_back(r);
  }

  if (!scale_nodes.empty()) {
    print_scale(rows, scale_batch.empty());
    if (!f.scale_csv.empty()) {
      write_file_exclusive(f.scale_csv, model::scale_csv_text(rows));
      fmt::print("# scale: {}\n", f.scale_csv);
    }
  }

  std::optional<model::Sensitivity> sensitivity;
  if (cluster.nodes > 1) {
    const model::Sensitivity sens = model::inter_bw_sensitivity(w, cluster, factory);
    fmt::print(
        "# sensitivity at {:.4g} GB/s inter-node: d(step)/d(bandwidth) = {:.6g} s per "
        "GB/s; elasticity {:.4g} (% step per % bandwidth)\n",
        sens.inter_bw_gbps, sens.ds_dbw_s_per_gbps, sens.elasticity);
    sensitivity = sens;
  } else {
    fmt::print("# sensitivity: one node, the inter-node bandwidth plays no part\n");
  }

  if (!f.json_out.empty()) {
    write_file_exclusive(f.json_out, model::model_document_text(w, cluster, s, results, sensitivity,
                                                                calibration_record, rows));
    fmt::print("# model: {}\n", f.json_out);
  }
  return 0;
}

}  // namespace

Command add_model_command(CLI::App& app) {
  auto f = std::make_shared<ModelFlags>();
  auto* sub = app.add_subcommand(
      "model",
      "The network's share of a training step (compute, tensor/pipeline/data-parallel "
      "communication, bubble, overlap) on a cluster's tiers, with what-if answers");
  add_workload_flags(*sub, f->workload);
  add_cluster_flags(*sub, f->cluster);
  sub->add_option("--json", f->json_out, "Also write the model as JSON (never overwrites)");
  sub->add_option("--scale-csv", f->scale_csv,
                  "Also write the --scale table as CSV (never overwrites)");
  sub->add_flag("--print-workload", f->print_workload,
                "Print the workload file of --preset/--workload and exit");
  sub->footer(
      "Examples:\n"
      "  ibscope model --preset gpt3-175b --inter-bw-gbps 24 --inter-lat-us 5 --inter-links 8 \\\n"
      "      --intra-bw-gbps 300 --intra-lat-us 2\n"
      "  ibscope model --workload w.json --fit inter.json intra.json --what-if layout=tp8pp8dp24\n"
      "  ibscope model --preset llama3-70b --print-workload > llama.json\n"
      "  ibscope model --preset gpt3-175b --inter-bw-gbps 24 --inter-links 8 --intra-bw-gbps 300 "
      "\\\n"
      "      --calibrate step=21.5 --scale nodes=48..384 --scale-csv scale.csv\n"
      "Exit status: 0, 2 usage (bad workload file, flags or what-if).");
  return {sub, [f] { return run_model(*f); }};
}

}  // namespace ibscope::cli
