#pragma once
/// Ring reduce-scatter, pipelined in chunks (ring_pipeline.hpp runs the steps).
///
/// Steps: p-1. At step k rank r sends block (r-1-k) mod p to r+1 and receives block (r-2-k)
/// mod p from r-1, reducing it with its own contribution; after p-1 steps rank r holds the
/// reduction of block r. Partial sums of the blocks a rank forwards live in a work buffer of
/// the full vector (kept between calls); the last step reduces straight into the output.
/// Bytes on the wire per rank: (p-1)/p n. Cost: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma.
/// busbw factor (nccl-tests): (p-1)/p.

#include <cstddef>
#include <string>
#include <vector>

#include "ibscope/collectives/algorithms/ring_pipeline.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/scratch.hpp"

namespace ibscope::collectives {

double ring_reduce_scatter_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class RingReduceScatter final : public CollectiveAlgorithm {
 public:
  RingReduceScatter(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  RingPipeline pipeline_;
  Scratch work_;  // grows to the largest vector seen, then stays
  std::string what_;
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
