#pragma once
/// Recursive doubling all-reduce: latency-optimal for small messages.
///
/// Steps (pattern/recursive.hpp): with p' = the largest power of two <= p and r = p - p',
///   pre-step (only if r > 0): rank 2i (i < r) sends its vector to rank 2i+1, which reduces it;
///   log2 p' steps: new rank q exchanges its whole vector with q XOR 2^k and both reduce;
///   post-step (only if r > 0): rank 2i+1 sends the result back to rank 2i.
/// Every reduction is "lower new rank's vector op higher's", so both partners compute the same
/// expression and every rank ends with bit-identical results.
///
/// Bytes on the wire per rank: log2 p' n (plus n for the 2r ranks in the pre/post step).
/// Cost (Thakur, Rabenseifner, Gropp 2005): log2 p' (alpha + n beta + n gamma), plus for a
/// non-power of two (alpha + n beta + n gamma) + (alpha + n beta) for the pre- and post-step;
/// for p = 2^k that is ceil(log2 p) (alpha + n beta + n gamma).
///
/// Each step sends the whole vector as one message (receive posted first). Scratch: one vector,
/// grown on first use to the largest count seen and kept, so a timed call allocates nothing.

#include <cstddef>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/pattern/recursive.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost formula above; 0 for p <= 1. n_bytes: the vector's size.
double rd_allreduce_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class RdAllreduce final : public CollectiveAlgorithm {
 public:
  /// Options are accepted for the registry's sake; recursive doubling sends whole vectors.
  RdAllreduce(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws TimeoutError / RemoteError naming the peer (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  void wait_both(transport::Request& recv, transport::Request& send, int peer,
                 const Deadline& deadline);

  transport::Comm& comm_;
  pattern::RecursiveLayout layout_;
  Scratch scratch_;   // the partner's vector; only grows
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
