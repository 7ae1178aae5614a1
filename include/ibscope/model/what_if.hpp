#pragma once
/// What-if questions about a training step: scale a tier's bandwidth or latency, change the
/// node count (data parallelism follows) or the parallel layout, and see the step time move;
/// and the step's sensitivity to the inter-node bandwidth. Pure: the network model comes from
/// a factory (make_network_model in the tool, a test double in tests).

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/model/network.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {

using NetworkFactory = std::function<std::unique_ptr<NetworkModel>(const ClusterNetwork&)>;

struct WhatIf {
  enum class Kind { kInterBw, kInterLatency, kIntraBw, kIntraLatency, kNodes, kLayout };
  Kind kind = Kind::kInterBw;
  double factor = 1;                   ///< k for the four scalings
  int nodes = 0;                       ///< kNodes
  int tp = 0, pp = 0, dp = 0, vp = 0;  ///< kLayout (vp 0: keep the workload's)
  std::string label;                   ///< as the user wrote it, e.g. "inter-bw=2"
};

/// "inter-bw=2,inter-lat=0.5,intra-bw=2,intra-lat=0.5,nodes=64,layout=tp8pp8dp16[vp2]".
/// Throws UsageError naming the bad item.
std::vector<WhatIf> parse_what_ifs(std::string_view text);

/// The cluster with the workload's layout: nodes = GPUs / gpus_per_node. Throws UsageError
/// when the cluster has another number of GPUs per node.
ClusterNetwork cluster_for(const ClusterNetwork& cluster, const Workload& w);

struct WhatIfResult {
  std::string label;
  Workload workload;  ///< the changed workload (layout and node count)
  StepBreakdown baseline;
  StepBreakdown changed;
  double change_pct = 0;  ///< 100 (changed - baseline) / baseline step time
};

/// Throws UsageError when the change gives an invalid workload (e.g. a batch no longer
/// divisible by the new data parallelism) or a factor <= 0.
WhatIfResult evaluate(const WhatIf& what, const Workload& w, const ClusterNetwork& cluster,
                      const NetworkFactory& factory);

struct Sensitivity {
  double inter_bw_gbps = 0;  ///< the point of evaluation
  double step_s = 0;
  double ds_dbw_s_per_gbps = 0;  ///< d(step)/d(inter bandwidth), seconds per GB/s (<= 0)
  /// (d step / step) / (d bw / bw): % step change per % bandwidth change.
  double elasticity = 0;
};

/// Central difference at the cluster's inter bandwidth, bw (1 +- rel_step).
Sensitivity inter_bw_sensitivity(const Workload& w, const ClusterNetwork& cluster,
                                 const NetworkFactory& factory, double rel_step = 0.01);

}  // namespace ibscope::model
