#include "ibscope/cli/workload_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ibscope/core/error.hpp"
#include "ibscope/model/scaling.hpp"
#include "ibscope/model/what_if.hpp"

namespace ibscope::cli {

void add_workload_flags(CLI::App& app, WorkloadFlags& f) {
  app.add_option("--workload", f.workload_file, "Workload file (JSON, docs/model.md)")
      ->check(CLI::ExistingFile);
  app.add_option("--preset", f.preset_name,
                 fmt::format("Shipped workload: {}", fmt::join(model::preset_names(), ", ")));
  app.add_option("--what-if", f.what_if,
                 "Comma-separated changes: inter-bw=K, inter-lat=K, intra-bw=K, intra-lat=K "
                 "(scale by K), nodes=N (dp follows), layout=tpNppNdpN[vpN]; '' for none")
      ->capture_default_str();
  app.add_option("--calibrate", f.calibrate,
                 "step=SECONDS (a measured or published step of this layout) or "
                 "microbatch=SECONDS (one micro-batch's compute on one GPU): solve the achieved "
                 "fraction of peak and use it everywhere (needs compute.peak_tflops)");
  app.add_option("--scale", f.scale,
                 "nodes=A,B,C or nodes=A..B (doubling from A, ending at B): step, network "
                 "share, tokens/s/GPU and efficiency against linear scaling per node count (tp, "
                 "pp, vp kept; dp follows)");
  app.add_option("--scale-batch", f.scale_batch_file,
                 "CSV 'nodes,global_batch' giving the global batch per scale (default: the "
                 "workload's batch at every scale)")
      ->check(CLI::ExistingFile);
}

TrainingOptions training_options(const WorkloadFlags& f) {
  TrainingOptions o;
  if (!f.calibrate.empty()) o.calibration = model::parse_calibration(f.calibrate);
  if (!f.scale.empty()) o.scale_nodes = model::parse_scale_nodes(f.scale);
  if (!f.scale_batch_file.empty()) {
    if (o.scale_nodes.empty()) throw UsageError("--scale-batch needs --scale nodes=...");
    o.scale_batch = model::load_batch_per_scale(f.scale_batch_file);
  }
  return o;
}

bool workload_given(const WorkloadFlags& f) noexcept {
  return !f.workload_file.empty() || !f.preset_name.empty();
}

model::Workload chosen_workload(const WorkloadFlags& f) {
  if (f.workload_file.empty() == f.preset_name.empty()) {
    throw UsageError(fmt::format("give --workload FILE or --preset NAME (presets: {})",
                                 fmt::join(model::preset_names(), ", ")));
  }
  return f.preset_name.empty() ? model::load_workload(f.workload_file)
                               : model::preset(f.preset_name);
}

model::ClusterNetwork chosen_cluster(const ClusterFlags& f, const model::Workload& w) {
  model::ClusterNetwork c = to_cluster(f);
  c.gpus_per_node = f.gpus_per_node > 0 ? f.gpus_per_node : w.gpus_per_node;
  if (f.nodes > 0 && f.nodes != w.nodes()) {
    throw UsageError(fmt::format(
        "--nodes {}: workload '{}' runs on {} nodes (tp x pp x dp / gpus_per_node); ask "
        "'--what-if nodes={}' to change the node count",
        f.nodes, w.name, w.nodes(), f.nodes));
  }
  return model::cluster_for(c, w);
}

}  // namespace ibscope::cli
