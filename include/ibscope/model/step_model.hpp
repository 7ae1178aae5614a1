#pragma once
/// One training step of a workload on a network: compute, the communication of each kind of
/// parallelism timed on the tier it crosses, the pipeline bubble, what overlaps, and the
/// network's share. Pure: the network comes in as a NetworkModel. Rules and formulas:
/// docs/model.md, "Training step".

#include <optional>
#include <span>
#include <string>

#include "ibscope/model/network.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// Where the ranks of each group sit, from Megatron-LM's order (rank = tp_rank + t (dp_rank +
/// d pp_rank); node = rank / gpus_per_node).
struct Placement {
  Group tp;                        ///< one tensor-parallel group
  Group dp;                        ///< one data-parallel group
  Group ep;                        ///< one expert-parallel group (1 rank when dense)
  bool pp_across_nodes = false;    ///< some pipeline boundary crosses nodes (t d p > G)
  int pp_concurrent_per_node = 1;  ///< GPUs of a node sending across a boundary at once
};
/// Requires a validated workload (validate()).
Placement place_ranks(const Workload& w) noexcept;

/// Seconds per step, all per GPU on the critical path.
struct StepBreakdown {
  int microbatches = 0;        ///< m = B / (b d)
  double bubble_fraction = 0;  ///< (p - 1) / (m v)
  double compute_s = 0;        ///< m x compute of one micro-batch
  double tp_s = 0;             ///< tensor-parallel collectives (all exposed)
  double pp_s = 0;             ///< pipeline sends (all exposed)
  double ep_s = 0;             ///< expert-parallel all-to-alls (all exposed); 0 when unpriced
  double bubble_s = 0;         ///< bubble_fraction x (compute + tp + pp + ep)
  double dp_total_s = 0;       ///< data-parallel reduction (and parameter gather), serial
  double dp_exposed_s = 0;     ///< the part of dp_total_s no computation hides
  double step_s = 0;           ///< compute + tp + pp + ep + bubble + dp_exposed
  /// step - compute (1 + bubble_fraction): what an infinitely fast network would remove.
  double network_s = 0;
  double network_share = 0;         ///< network_s / step_s
  double tokens_per_s_per_gpu = 0;  ///< B s / (step x GPUs)
  std::optional<double> mfu;        ///< model FLOP/s / peak; absent without peak_tflops
  double model_flops = 0;           ///< per step, whole model
  double hardware_flops = 0;        ///< per step, with recomputation
  double dp_bytes_per_gpu = 0;      ///< gradient bytes one GPU reduces per step
  int dp_buckets = 0;
  /// Expert parallelism (absent when dense): bytes of one all-to-all, calls per step on one
  /// GPU, and whether the network could price them. Unpriced (no all-to-all fit for a tier
  /// the group crosses): ep_s is 0, left out of the step, and `ep_unpriced` says why.
  double ep_bytes = 0;
  double ep_calls = 0;
  std::optional<std::string> ep_unpriced;
};

/// Throws UsageError when the network refuses a group (e.g. a layout it cannot place).
StepBreakdown model_step(const Workload& w, const NetworkModel& net);

/// Exposed seconds of collectives that start after computation: call k (of n) may start once
/// k/n of `window_s` of computation has passed, calls run one after another, and whatever
/// ends after the window is exposed. Equal calls of c <= window/n: exactly c (only the last).
double exposed_after(std::span<const double> call_s, double window_s) noexcept;
/// Exposed seconds of collectives that computation waits for: call k (of n) must end before
/// (k-1)/n of `window_s` has passed; the delay that makes every call arrive in time.
/// Equal calls of c <= window/n: exactly c (only the first).
double exposed_before(std::span<const double> call_s, double window_s) noexcept;

}  // namespace ibscope::model
