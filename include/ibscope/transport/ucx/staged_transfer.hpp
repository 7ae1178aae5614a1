#pragma once
/// Messages cut into fragments and, for memory UCX cannot read (device memory without a
/// CUDA-enabled UCX), staged through host bounce buffers:
///
///   send: copy fragment i to a bounce buffer (async) -> once copied, UCX send from it -> once
///         sent, the bounce buffer is free again;
///   recv: UCX receive of fragment i into a bounce buffer -> once received, copy to its place in
///         the user buffer (async) -> once copied, the bounce buffer is free again.
///
/// Up to `window` fragments of one message are in flight, so the copy of fragment i+1 overlaps
/// the network transfer of fragment i (and, on the receiving side, the copy of fragment i
/// overlaps the transfer of i+1). Each message owns its bounce buffers while in flight: no
/// message waits for another's, so staging adds no dependency the algorithm did not have.
///
/// The wire format: a message longer than `fragment_bytes` is sent as ceil(bytes / fragment)
/// UCX messages of the same tag, in order; UCX matches same-tag messages from one sender in
/// the order they were sent, and the receiver posts its fragment receives in order. So every
/// rank of a job must use the same fragment_bytes (the sweeps set it from a job-wide flag).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "ibscope/memory/copy_engine.hpp"
#include "ibscope/transport/ucx/comm.hpp"

namespace ibscope::ucx {

/// Bounce buffers by size class (powers of two from 4 KiB), reused across messages. Grows to
/// the largest number in flight at once; freed with the pool.
class BouncePool {
 public:
  explicit BouncePool(memory::CopyEngine& engine) noexcept : engine_(engine) {}
  memory::BounceBuffer take(std::size_t bytes);
  void give(memory::BounceBuffer buffer);
  std::size_t allocated_bytes() const noexcept { return allocated_bytes_; }

 private:
  static std::size_t size_class(std::size_t bytes) noexcept;
  memory::CopyEngine& engine_;
  std::map<std::size_t, std::vector<memory::BounceBuffer>> free_;
  std::size_t allocated_bytes_ = 0;
};

/// Number of fragments a message of `bytes` is cut into (at least 1; 0-byte messages are one).
std::size_t fragment_count(std::size_t bytes, std::size_t fragment_bytes) noexcept;

/// One message in flight. Created by Comm::isend / Comm::irecv when the communicator stages or
/// fragments; driven by Request::test.
class StagedTransfer {
 public:
  struct Setup {
    Comm* comm = nullptr;
    memory::CopyEngine* engine = nullptr;  ///< null: fragments go straight from/to `user`
    BouncePool* pool = nullptr;
    std::size_t fragment_bytes = 0;
    int window = 4;
  };
  StagedTransfer(const Setup& setup, bool is_send, int peer, std::uint64_t tag, std::byte* user,
                 std::size_t bytes);
  ~StagedTransfer();
  StagedTransfer(const StagedTransfer&) = delete;
  StagedTransfer& operator=(const StagedTransfer&) = delete;

  /// Moves every fragment as far as it can go without blocking; true once the whole message is
  /// sent (send) or in the user buffer (receive). Throws what the fragment requests throw.
  bool advance();

 private:
  enum class State { kCopying, kOnWire };
  struct Fragment {
    std::size_t index = 0;
    memory::BounceBuffer bounce;  // empty when not staged
    std::uint64_t ticket = 0;
    Request request;
    State state = State::kOnWire;
  };
  std::size_t offset(std::size_t i) const noexcept { return i * setup_.fragment_bytes; }
  std::size_t length(std::size_t i) const noexcept;
  void start_fragments();
  bool advance_send();
  bool advance_recv();
  bool advance_window();

  Setup setup_;
  bool is_send_;
  int peer_;
  std::uint64_t tag_;
  std::byte* user_;
  std::size_t bytes_;
  std::size_t fragments_;
  std::size_t next_ = 0;  // next fragment to start
  bool done_ = false;
  std::deque<Fragment> window_;
};

}  // namespace ibscope::ucx
