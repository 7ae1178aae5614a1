#pragma once
/// Pairwise-exchange all-to-all-v (pattern/alltoall.hpp's shifted exchange with per-peer
/// counts, CollectiveArgs::counts): round k = 1..p-1, rank r sends its block for (r+k) mod p and
/// receives the block of (r-k) mod p, both posted at once and both waited for before the next
/// round; a block of 0 elements is no message (both sides know the counts); the own block is a
/// local copy. Out of place only.
///
/// n is the mean bytes one rank sends (the row's size). With uniform counts this is the
/// pairwise all-to-all: (p-1) (alpha + n/p beta). Skewed counts make each round wait for its
/// larger message, so a round costs alpha + max(sent, received) beta: the formula is the
/// uniform case's, a lower bound (docs/methodology.md, "All-to-all-v").

#include "ibscope/collectives/algorithms/alltoallv_call.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost formula above (uniform counts); 0 for p <= 1. n_bytes: the mean bytes per rank.
double pairwise_alltoallv_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class PairwiseAlltoallv final : public CollectiveAlgorithm {
 public:
  PairwiseAlltoallv(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws UsageError for a call without counts or in place; TimeoutError / RemoteError naming
  /// the peer (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  AlltoallvPrologue prologue_;
};

}  // namespace ibscope::collectives
