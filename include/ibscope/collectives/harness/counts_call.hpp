#pragma once
/// The counts of one all-to-all-v size of a sweep (collectives/pattern/alltoallv_counts.hpp):
/// every rank computes them locally from the spec, with no communication.

#include <cstddef>
#include <cstdint>

#include "ibscope/collectives/pattern/alltoallv_counts.hpp"

namespace ibscope::collectives {

struct CollectiveSweepOptions;

/// One size's counts on one rank.
struct CountsCall {
  AlltoallvPlan plan;              ///< this rank's, with the matrix (every rank's counts)
  CountsImbalance imbalance;       ///< the call's (the same on every rank)
  std::size_t max_rank_count = 0;  ///< the most elements one rank sends or receives
};

/// The counts of a call of `count` elements per rank on average over `ranks` ranks, for rank
/// `rank`. `spec` null: uniform. Throws UsageError for a matrix of another rank count.
CountsCall counts_call(const CountsSpec* spec, int ranks, int rank, std::size_t count);

/// The bytes each rank's send and receive buffers must hold for the sweep of `o` over `ranks`
/// ranks: the largest of what one rank sends or receives over its sizes and types (at least the
/// largest size). O(p) per size for a generator, O(p^2) for a matrix.
std::uint64_t counts_buffer_bytes(const CollectiveSweepOptions& o, int ranks);

}  // namespace ibscope::collectives
