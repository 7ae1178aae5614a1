#pragma once
/// Ring all-gather, pipelined in chunks (ring_pipeline.hpp runs the steps).
///
/// Steps: p-1. At step k rank r sends block (r-k) mod p to r+1 (its own block at step 0, then
/// the block it received at step k-1) and receives block (r-1-k) mod p from r-1, in place in
/// the output. Bytes on the wire per rank: (p-1)/p n. Cost: (p-1) alpha + (p-1)/p n beta.
/// busbw factor (nccl-tests): (p-1)/p.

#include <cstddef>
#include <string>

#include "ibscope/collectives/algorithms/ring_pipeline.hpp"
#include "ibscope/collectives/collective.hpp"

namespace ibscope::collectives {

double ring_allgather_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class RingAllgather final : public CollectiveAlgorithm {
 public:
  RingAllgather(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  RingPipeline pipeline_;
  std::string what_;
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
