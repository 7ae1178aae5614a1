#pragma once
/// Tree all-reduce: pipelined reduce to the root of a binary tree, then broadcast from it.
///
/// Tree: the in-order binary tree over the ranks (pattern/tree.hpp, tree 0): depth
/// d = floor(log2 p), odd ranks interior (up to two children), even ranks leaves, root rank
/// 2^d - 1. Schedule (tree_pipeline.hpp): the buffer is cut into k chunks; each chunk is reduced
/// up the tree (an interior rank reduces its children's copies into its own, then forwards) and
/// broadcast down, and different chunks are in different phases at once.
///
/// Steps: 2d + k - 1 pipeline steps (chunk k - 1 leaves the deepest leaf at step k - 1, reaches
/// the root d steps later and the deepest leaf again after d more).
///
/// Bytes on the wire per rank (n = message bytes): a leaf sends n and receives n; an interior
/// rank with two children sends 3n and receives 3n (n up, 2n down; 2n up, n down); the root
/// sends and receives 2n. So the busiest rank moves 3n each way, against 2(p-1)/p n for ring.
///
/// Cost (alpha: per message, beta: per byte, gamma: per byte reduced; links full duplex, so a
/// step costs the larger of a rank's bytes in and out). With c = n/k bytes per chunk and m =
/// min(2, p-1) children at the busiest rank:
///   T = 2d (alpha + m c beta) + d m c gamma              first chunk up and down (fill/drain)
///     + (k - 1) (alpha + L c beta + m c gamma)            each further chunk, at the busiest rank
/// where L = chunks each way per step at the busiest rank: 3 (p >= 4: an interior non-root
/// rank, whose up and down phases overlap), m (p <= 3: only the root is interior).
/// Large n: 3 n beta + 2 n gamma (p >= 4). Small n (k = 1): 2d alpha, against 2(p-1) alpha for
/// ring: the tree wins on latency, ring on bandwidth.
///
/// Default chunk 128 KiB. Leaving out gamma, T(k) ~ (2d + k - 1) alpha + L n beta
/// + (2 d m - L) n beta / k, smallest at c* = sqrt(n alpha / ((2 d m - L) beta)): for alpha = 2 us,
/// 1/beta = 12.5 GB/s and d = 4..6 that is 35-45 KB at 1 MiB and 280-360 KB at 64 MiB. 128 KiB
/// is within a factor 3 of c* over that range (where the extra is at most 2/3 of the
/// pipeline's own overhead, small against L n beta at large n), keeps the fill (2d chunks)
/// short, and keeps the scratch slots (4 per child) and each reduction in L2.

#include <cstddef>

#include "ibscope/collectives/algorithms/tree_pipeline.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost above with the default chunk (the registry's cost_s).
double tree_allreduce_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;
/// The cost above for a given chunk (bytes, > 0).
double tree_allreduce_chunked_cost_s(const LinkCost& c, double n_bytes, int p,
                                     double chunk_bytes) noexcept;

class TreeAllreduce final : public CollectiveAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 128 * 1024;

  /// Init: this rank's place in the tree and its scratch slots (not timed).
  TreeAllreduce(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  TreePipeline pipeline_;
};

}  // namespace ibscope::collectives
