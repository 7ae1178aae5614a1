#pragma once
/// The training workload a command models (model/workload.hpp), from flags: a workload file
/// (`--workload FILE`) or a shipped preset (`--preset NAME`), the what-if questions
/// (`--what-if`, model/what_if.hpp), and the cluster laid out as the workload needs it.
/// Shared by `ibscope model` and `ibscope report`.

#include <CLI/CLI.hpp>
#include <string>

#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/model/network.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::cli {

/// What `--what-if` asks when not given.
inline constexpr const char* kDefaultWhatIfs = "inter-bw=2,inter-bw=0.5,inter-lat=0.5";

struct WorkloadFlags {
  std::string workload_file;
  std::string preset_name;
  std::string what_if = kDefaultWhatIfs;
};

/// Adds --workload, --preset and --what-if to `app`.
void add_workload_flags(CLI::App& app, WorkloadFlags& f);

/// Whether --workload or --preset was given.
bool workload_given(const WorkloadFlags& f) noexcept;

/// The workload of --workload or --preset (exactly one must be given). Throws UsageError.
model::Workload chosen_workload(const WorkloadFlags& f);

/// The cluster of the cluster flags (to_cluster) laid out as `w` needs it; --nodes and
/// --gpus-per-node may only repeat the workload's layout (other node counts are what-ifs).
/// Throws UsageError.
model::ClusterNetwork chosen_cluster(const ClusterFlags& f, const model::Workload& w);

}  // namespace ibscope::cli
