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
#include <deque>
#include <string>
#include <vector>

#include "ibscope/collectives/allreduce.hpp"
#include "ibscope/collectives/pattern/ring.hpp"

namespace ibscope {

class RingAllreduce final : public AllreduceAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 256 * 1024;
  static constexpr std::size_t kScratchSlots = 4;

  RingAllreduce(ucx::Comm& comm, const AlgorithmOptions& options);
  void run(const AllreduceArgs& args, const Deadline& deadline) override;

 private:
  // Per-step segments and chunk count (the segment received at step s is sent at step s+1).
  struct StepPlan {
    pattern::Span send, recv;
    std::size_t chunks;
  };
  // Position in the flattened schedule: ring step s (0..2(p-1)-1), chunk c within that step.
  struct Cursor {
    int step = 0;
    std::size_t chunk = 0;
  };
  struct PendingRecv {
    Cursor at;
    std::size_t slot;
    ucx::Request req;
  };
  struct PendingSend {
    Cursor at;
    ucx::Request req;
  };

  ucx::Comm& comm_;
  std::size_t chunk_bytes_;
  std::vector<std::byte> scratch_;  // kScratchSlots chunks
  // Schedule state, kept between calls so that a timed iteration allocates nothing.
  std::vector<StepPlan> plan_;
  std::vector<std::size_t> done_;  // chunks of step s received (and reduced), in order
  std::vector<std::size_t> sent_;  // sends of step s completed, in order
  std::deque<PendingRecv> recvs_;
  std::deque<PendingSend> sends_;
  std::vector<std::size_t> free_slots_;
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope
