#pragma once
/// The pipelined ring engine behind ring all-reduce, ring reduce-scatter and ring all-gather.
///
/// It runs `rs_steps` reduce-scatter steps and then `ag_steps` all-gather steps of the ring
/// pattern (pattern/ring.hpp) for one rank. Each segment is cut into chunks; a chunk received
/// in one step is reduced (reduce-scatter) and forwarded in the next step as soon as it is
/// ready, while later chunks are still in flight, so sends, receives and reductions of
/// different chunks overlap. Reduce-scatter receives land in a few cache-sized scratch slots
/// and are reduced straight into their destination; all-gather receives land in place. At most
/// a few receives and sends are in flight: posting every chunk of a large message at once left
/// hundreds of rendezvous requests queued in UCX 1.13 and could stall (seen at 64-128 MiB).
///
/// All schedule state is kept between calls, so a timed iteration allocates nothing.

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

class RingPipeline {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 256 * 1024;
  static constexpr std::size_t kScratchSlots = 4;

  /// Where the data of one run comes from and goes to. Offsets are in elements of the full
  /// vector; pointers marked "full" are indexed by them.
  struct Plan {
    int vrank = 0;  ///< position in the ring arithmetic (a rotation of the rank)
    /// The ranks of the ring in ring order, this rank among them (a sub-ring, e.g. one rank
    /// per host: -A hier); empty: every rank of the communicator in rank order.
    std::span<const int> group;
    int rs_steps = 0;          ///< reduce-scatter steps: p-1 or 0
    int ag_steps = 0;          ///< all-gather steps: p-1 or 0
    const void* in = nullptr;  ///< full: each rank's contribution (reduce-scatter steps)
    void* work = nullptr;      ///< full: partial sums, and where all-gather chunks land
    /// If set, the last reduce-scatter step reduces into this buffer, which holds the elements
    /// from `last_out_offset` on (a standalone reduce-scatter's output block).
    void* last_out = nullptr;
    std::size_t last_out_offset = 0;
    /// If set (all-gather only), step 0 sends from this buffer, which holds the elements from
    /// `first_in_offset` on (a standalone all-gather's input block).
    const void* first_in = nullptr;
    std::size_t first_in_offset = 0;
  };

  /// Chunk size and memory space from `options` (chunk 0: kDefaultChunkBytes).
  RingPipeline(transport::Comm& comm, const AlgorithmOptions& options);

  /// Runs the plan over `count` elements. `what` names the operation in errors.
  void run(const Plan& plan, std::size_t count, DataType type, ReduceOp op,
           const Deadline& deadline, const std::string& what);

  std::size_t chunk_bytes() const noexcept { return chunk_bytes_; }
  /// Where the buffers live (reductions and copies go through it).
  memory::MemorySpace& space() const noexcept { return scratch_.space(); }

 private:
  struct StepPlan {
    pattern::Span send, recv;
    std::size_t send_chunks, recv_chunks;
  };
  // Position in the flattened schedule: ring step s, chunk c within that step.
  struct Cursor {
    int step = 0;
    std::size_t chunk = 0;
  };
  struct PendingRecv {
    Cursor at;
    std::size_t slot;
    transport::Request req;
  };
  struct PendingSend {
    Cursor at;
    transport::Request req;
  };

  transport::Comm& comm_;
  std::size_t chunk_bytes_;
  Scratch scratch_;  // kScratchSlots chunk slots, sized on first use
  std::vector<StepPlan> steps_;
  std::vector<std::size_t> done_;  // chunks of step s received (and reduced), in order
  std::vector<std::size_t> sent_;  // sends of step s completed, in order
  std::deque<PendingRecv> recvs_;
  std::deque<PendingSend> sends_;
  std::vector<std::size_t> free_slots_;
};

}  // namespace ibscope::collectives
