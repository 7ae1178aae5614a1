#pragma once
/// Scaling curves: one workload's step at several node counts, keeping t, p and v and letting
/// data parallelism follow (d = nodes x gpus_per_node / (t p)), with the global batch either
/// fixed or given per scale. Pure: the network model comes from a factory. Rules:
/// docs/model.md, "Scaling curves".

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/model/network.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// "nodes=A,B,C" (each >= 1) or "nodes=A..B" (A, 2A, 4A, .. up to B, and B). Sorted, without
/// repeats. Throws UsageError naming the text.
std::vector<int> parse_scale_nodes(std::string_view text);

/// Global batch per node count from a CSV file with the header `nodes,global_batch` and one
/// line per scale. Throws UsageError naming the file and line of a bad or repeated line.
std::map<int, int> load_batch_per_scale(const std::filesystem::path& path);
/// The same from the file's text; `source` names it in errors.
std::map<int, int> batch_per_scale_from_text(std::string_view text, std::string_view source);

struct ScaleRow {
  int nodes = 0;
  Workload workload;  ///< the workload at this scale (dp, and the batch when given per scale)
  StepBreakdown step;
  /// tokens/s/GPU here over tokens/s/GPU at the first (smallest) scale: 1 is linear scaling.
  double efficiency = 0;
};

/// One row per node count, in order. `batch_per_scale` empty: the workload's batch at every
/// scale; otherwise every node count must have a line. Throws UsageError when a scale gives an
/// invalid workload (its message names the node count) or has no batch line.
std::vector<ScaleRow> scale_curve(const Workload& w, const ClusterNetwork& cluster,
                                  const std::vector<int>& nodes,
                                  const std::map<int, int>& batch_per_scale,
                                  const NetworkFactory& factory);

/// CSV of the rows: header `nodes,gpus,tp,pp,dp,vp,global_batch,microbatches,step_s,network_s,
/// network_pct,tokens_per_s_per_gpu,efficiency_pct,mfu_pct` (mfu_pct empty without a peak),
/// one line per row, trailing newline.
std::string scale_csv_text(const std::vector<ScaleRow>& rows);

}  // namespace ibscope::model
