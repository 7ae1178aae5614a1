#pragma once
/// Pairwise-exchange all-to-all (MPICH's pairwise algorithm; pattern/alltoall.hpp): one peer
/// per round, in p-1 rounds.
///
/// Out of place (shifted exchange): round k = 1..p-1, rank r sends its block for (r+k) mod p
/// and receives the block of (r-k) mod p, both posted at once and both waited for before the
/// next round; its own block is a local copy. In place (paired exchange): round k = 0..p-1, rank
/// r exchanges block j = (k-r) mod p with rank j, which exchanges with r in the same round: the
/// block is copied to a one-block scratch, sent from there, and received over itself (p-1
/// rounds with a message; the rank's own round has none).
///
/// n is the bytes of one rank's whole send buffer (nccl-tests' size): each message is n/p bytes.
/// Bytes on the wire per rank: (p-1)/p n each way. Cost: (p-1) (alpha + n/p beta) (a round
/// waits for its slowest message); in place adds a local copy of (p-1)/p n. busbw factor
/// (nccl-tests): (p-1)/p.

#include <cstddef>
#include <string>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost formula above; 0 for p <= 1. n_bytes: one rank's whole send buffer.
double pairwise_alltoall_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class PairwiseAlltoall final : public CollectiveAlgorithm {
 public:
  /// Options give the memory space (scratch and the local copies); whole blocks are sent.
  PairwiseAlltoall(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws TimeoutError / RemoteError naming the peer (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  Scratch scratch_;   // in place: the block being sent; only grows
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
