#pragma once
/// Scattered all-to-all-v: every message posted at once, in windows of kScatteredWindowPeers
/// peers (as the scattered all-to-all, scattered_alltoall.hpp), with per-peer counts
/// (CollectiveArgs::counts): window w posts the receives of rounds w*32+1.. first, then the
/// sends, and waits for all of them; a block of 0 elements is no message; the own block is a
/// local copy. Out of place only.
///
/// n is the mean bytes one rank sends (the row's size). Cost with uniform counts (the scattered
/// all-to-all's): ceil((p-1)/32) alpha + (p-1)/p n beta; skewed counts make a window wait for
/// the rank's larger side, so the formula is a lower bound (docs/methodology.md).

#include <vector>

#include "ibscope/collectives/algorithms/alltoallv_call.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost formula above (uniform counts); 0 for p <= 1. n_bytes: the mean bytes per rank.
double scattered_alltoallv_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class ScatteredAlltoallv final : public CollectiveAlgorithm {
 public:
  ScatteredAlltoallv(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws UsageError for a call without counts or in place; TimeoutError / RemoteError naming
  /// the peer (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  AlltoallvPrologue prologue_;
  std::vector<transport::Request> window_;  // only grows
};

}  // namespace ibscope::collectives
