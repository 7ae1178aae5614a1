#pragma once
/// Rabenseifner all-reduce: recursive-halving reduce-scatter + recursive-doubling all-gather.
///
/// Steps (pattern/recursive.hpp): with p' = the largest power of two <= p and r = p - p',
///   pre-step (only if r > 0): rank 2i (i < r) sends its vector to rank 2i+1, which reduces it;
///   log2 p' halving steps: new rank q sends half of its current window to q XOR 2^k and
///     reduces the other half with the partner's copy (n/2, n/4, ..., n/p' elements);
///   log2 p' doubling steps, the halving steps backwards: q sends the range it holds reduced
///     and receives its partner's (n/p', ..., n/2);
///   post-step (only if r > 0): rank 2i+1 sends the result back to rank 2i.
/// The vector is cut into p' blocks differing by at most one element, so any count works
/// (blocks of 0 elements when count < p'; empty ranges are skipped by both sides).
///
/// Bytes on the wire per rank: 2 (p'-1)/p' n (plus n for the 2r ranks in the pre/post step).
/// Cost (Thakur, Rabenseifner, Gropp 2005): 2 log2 p' alpha + 2 (p'-1)/p' n beta
/// + (p'-1)/p' n gamma, plus for a non-power of two (alpha + n beta + n gamma) + (alpha + n beta).
///
/// Every range is sent in chunks of --chunk bytes (default 256 KiB) with at most kMaxInFlight
/// sends and receives outstanding; received halving chunks land in kScratchSlots cache-sized
/// slots and are reduced into the output as they arrive, overlapping reduction and transfer.
/// All-gather chunks land in place. Scratch is allocated at construction; a call allocates
/// nothing.

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/pattern/recursive.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// The cost formula above; 0 for p <= 1. n_bytes: the vector's size.
double rhd_allreduce_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class RhdAllreduce final : public CollectiveAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 256 * 1024;
  static constexpr std::size_t kScratchSlots = 4;
  static constexpr std::size_t kMaxInFlight = 8;  // per direction

  RhdAllreduce(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws TimeoutError / RemoteError naming the peer (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  // One exchange with `peer`: send `send` (elements of send_base) and receive `recv`, either
  // straight into out (reduce_with == nullptr) or into scratch, then out = mine op theirs (or
  // theirs op mine when !mine_first) with mine = reduce_with. Chunked, bounded in flight.
  struct Exchange {
    int peer;
    std::uint32_t step;  // tag step
    const std::byte* send_base;
    pattern::Span send;
    pattern::Span recv;
    const std::byte* reduce_with;
    bool mine_first;
  };
  void exchange(const CollectiveArgs& a, std::byte* out, std::uint32_t seq, const Exchange& x,
                const Deadline& deadline);

  struct Pending {
    std::size_t chunk = 0;
    transport::Request req;
  };
  // Fixed-capacity FIFO: no allocation while running.
  struct Fifo {
    std::array<Pending, kMaxInFlight> items;
    std::size_t head = 0, size = 0;
    Pending& front() { return items[head]; }
    void push(std::size_t chunk, transport::Request&& req) {
      Pending& p = items[(head + size) % kMaxInFlight];
      p.chunk = chunk;
      p.req = std::move(req);
      ++size;
    }
    void pop() {
      head = (head + 1) % kMaxInFlight;
      --size;
    }
    void clear() {
      for (Pending& p : items) p.req = transport::Request();
      head = size = 0;
    }
  };

  transport::Comm& comm_;
  pattern::RecursiveLayout layout_;
  std::size_t chunk_bytes_;
  std::size_t slot_bytes_;  // >= one chunk of the widest type, a multiple of 64
  Scratch scratch_;         // kScratchSlots slots
  Fifo recvs_, sends_;
  std::size_t chunk_elems_ = 1;  // for the current call's type
  std::string what_;             // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
