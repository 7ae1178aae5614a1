#pragma once
/// Ring all-reduce = ring reduce-scatter + ring all-gather, pipelined in chunks.
///
/// Steps: 2(p-1) ring steps (pattern/ring.hpp). Each segment of n/p bytes is cut into chunks;
/// a chunk received in one step is reduced (reduce-scatter) and forwarded in the next step as
/// soon as it is ready, while later chunks are still in flight, so sends, receives and
/// reductions of different chunks overlap. Reduce-scatter receives land in a few cache-sized
/// scratch slots and are reduced straight into the output; all-gather receives land in place.
///
/// Bytes on the wire per rank: 2(p-1)/p n. Cost: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n
/// gamma (plus chunking: alpha per chunk instead of per step).

#include <cstddef>
#include <vector>

#include "ibscope/collectives/allreduce.hpp"

namespace ibscope {

class RingAllreduce final : public AllreduceAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 256 * 1024;
  static constexpr std::size_t kScratchSlots = 4;

  RingAllreduce(ucx::Comm& comm, const AlgorithmOptions& options);
  void run(const AllreduceArgs& args, const Deadline& deadline) override;

 private:
  ucx::Comm& comm_;
  std::size_t chunk_bytes_;
  std::vector<std::byte> scratch_;  // kScratchSlots chunks
};

}  // namespace ibscope
