#pragma once
/// Double binary tree all-reduce (Sanders, Speck, Traeff 2009; NCCL >= 2.4, UCC "dbt"): two
/// pipelined tree all-reduces at once, each over half of the buffer.
///
/// Trees (pattern/tree.hpp): tree 0 is the in-order binary tree over the ranks (odd ranks
/// interior), tree 1 the same tree shifted by one rank (even ranks below p - 1 interior). Their
/// interior sets are disjoint, so for p > 2 every rank is a leaf in at least one tree and
/// forwards at most one half through two children; both have depth d = floor(log2 p). Tree 0
/// carries the first ceil(count/2) elements, tree 1 the rest, each cut into k chunks and
/// reduced up and broadcast down as in `tree` (tree_pipeline.hpp), both trees at once.
///
/// Steps: 2d + k - 1 pipeline steps per tree, the two trees side by side.
///
/// Bytes on the wire per rank (n = message bytes), p >= 4: interior in one tree, 3 n/2 each
/// way, plus leaf in the other, n/2 each way: 2n sent and 2n received, the same on every rank
/// for even p (for odd p rank p - 1 is a leaf in both: n). Ring: 2(p-1)/p n.
///
/// Cost (as for `tree`; links full duplex). With c = (n/2)/k bytes per chunk, m = min(2, p-1):
///   T = 2d (alpha + m c beta) + d m c gamma              first chunks up and down
///     + (k - 1) (alpha + L c beta + m c gamma)            each further pair of chunks
/// where L = chunks each way per step at the busiest rank: 4 (p >= 4: 3 as an interior rank of
/// one tree + 1 as a leaf of the other), 3 (p = 3), 2 (p = 2: root of one edge, leaf of the
/// other). Large n: 2 n beta + n gamma, like ring; small n (k = 1): 2d alpha, like `tree`.
///
/// Default chunk 128 KiB, per tree; the reasoning is `tree`'s (tree_allreduce.hpp), with n/2
/// per tree.

#include <cstddef>

#include "ibscope/collectives/algorithms/tree_pipeline.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost above with the default chunk (the registry's cost_s).
double dbt_allreduce_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;
/// The cost above for a given chunk (bytes, > 0).
double dbt_allreduce_chunked_cost_s(const LinkCost& c, double n_bytes, int p,
                                    double chunk_bytes) noexcept;

class DbtAllreduce final : public CollectiveAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 128 * 1024;

  /// Init: this rank's place in both trees and its scratch slots (not timed).
  DbtAllreduce(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  TreePipeline pipeline_;
};

}  // namespace ibscope::collectives
