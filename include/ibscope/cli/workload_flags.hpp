#pragma once
/// The training workload a command models (model/workload.hpp), from flags: a workload file
/// (`--workload FILE`) or a shipped preset (`--preset NAME`), the what-if questions
/// (`--what-if`, model/what_if.hpp), and the cluster laid out as the workload needs it.
/// Shared by `ibscope model` and `ibscope report`.

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/model/calibration.hpp"
#include "ibscope/model/network.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::cli {

/// What a training-step answer adds to the step: a calibration of the compute on one measured
/// figure and a scaling curve (node counts, and the global batch per node count; empty: fixed).
struct TrainingOptions {
  std::optional<model::Calibration> calibration;
  std::vector<int> scale_nodes;
  std::map<int, int> scale_batch;
};

/// What `--what-if` asks when not given.
inline constexpr const char* kDefaultWhatIfs = "inter-bw=2,inter-bw=0.5,inter-lat=0.5";

struct WorkloadFlags {
  std::string workload_file;
  std::string preset_name;
  std::string what_if = kDefaultWhatIfs;
  std::string calibrate;         ///< --calibrate step=S|microbatch=S
  std::string scale;             ///< --scale nodes=...
  std::string scale_batch_file;  ///< --scale-batch FILE
};

/// Adds --workload, --preset, --what-if, --calibrate, --scale and --scale-batch to `app`.
void add_workload_flags(CLI::App& app, WorkloadFlags& f);

/// Whether --workload or --preset was given.
bool workload_given(const WorkloadFlags& f) noexcept;

/// The workload of --workload or --preset (exactly one must be given). Throws UsageError.
model::Workload chosen_workload(const WorkloadFlags& f);

/// --calibrate, --scale and --scale-batch parsed (the batch file read). Throws UsageError.
TrainingOptions training_options(const WorkloadFlags& f);

/// The cluster of the cluster flags (to_cluster) laid out as `w` needs it; --nodes and
/// --gpus-per-node may only repeat the workload's layout (other node counts are what-ifs).
/// Throws UsageError.
model::ClusterNetwork chosen_cluster(const ClusterFlags& f, const model::Workload& w);

}  // namespace ibscope::cli
