#pragma once
/// Ring all-reduce = ring reduce-scatter + ring all-gather, pipelined in chunks
/// (ring_pipeline.hpp runs the steps).
///
/// Steps: 2(p-1) ring steps (pattern/ring.hpp); each segment of n/p bytes moves in chunks of
/// --chunk bytes (default 256 KiB) so that sends, receives and reductions overlap.
/// Bytes on the wire per rank: 2(p-1)/p n. Cost: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n
/// gamma (plus chunking: alpha per chunk instead of per step).

#include <cstddef>
#include <string>

#include "ibscope/collectives/algorithms/ring_pipeline.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

class RingAllreduce final : public CollectiveAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = RingPipeline::kDefaultChunkBytes;

  RingAllreduce(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  RingPipeline pipeline_;
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
