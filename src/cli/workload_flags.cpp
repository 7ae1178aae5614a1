#include "ibscope/cli/workload_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ibscope/core/error.hpp"
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
