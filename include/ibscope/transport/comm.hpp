#pragma once
/// The point-to-point seam under the collectives: what an algorithm may ask of the data
/// transport, and nothing else (as gloo's transport::pair and UCC's TL interface are). An
/// algorithm sees a rank, a size, non-blocking tagged sends and receives of contiguous bytes,
/// requests it tests or waits for with a deadline, progress, a health check for its own progress
/// loops, and a sequence number per collective operation.
///
/// Implementations (transport/transports.hpp registers them):
///   ucx     the real one: UCP tag matching over whatever UCX picks (rc/dc verbs, shm, tcp);
///           staging of GPU memory through host bounce buffers is its business
///           (transport/ucx/staged_transfer.hpp), never an algorithm's;
///   inproc  ranks as threads of one process, messages as memory copies, with injectable
///           delays and failures: the unit tests' transport (transport/inproc/).
/// The intra-host arena (transport/intra_host/local_arena.hpp) carries the data of the
/// single-copy local steps beside either of them.
///
/// Matching: a receive names its source rank and a 64-bit tag and matches only a message from
/// that rank with that exact tag; messages of one sender with the same tag match in the order
/// they were sent. make_tag() packs the source into the tag, so the source is part of the match
/// on every transport.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/clock.hpp"
namespace ibscope::memory {
class CopyEngine;
}  // namespace ibscope::memory

namespace ibscope::transport {

using Tag = std::uint64_t;

/// A tag is [source rank: 20 bits][operation sequence: 12][step: 12][chunk: 20].
constexpr Tag make_tag(int source_rank, std::uint32_t op_seq, std::uint32_t step,
                       std::uint32_t chunk) noexcept {
  return (static_cast<Tag>(source_rank & 0xfffff) << 44) |
         (static_cast<Tag>(op_seq & 0xfff) << 32) | (static_cast<Tag>(step & 0xfff) << 20) |
         (chunk & 0xfffff);
}

class Comm;

/// An outstanding send or receive: a handle the transport that made it completes. Move-only.
/// Dropped while pending (an error path), the transport releases it: a receive is cancelled, so
/// that nothing is ever written into a buffer its owner has freed.
class Request {
 public:
  Request() noexcept = default;
  /// For transports: `handle` is theirs (never null for a pending request), `flavor` a few bits
  /// they may use to tell their kinds of handle apart.
  Request(Comm* owner, void* handle, int peer, bool is_send, unsigned flavor = 0) noexcept
      : owner_(owner), handle_(handle), peer_(peer), flavor_(flavor), is_send_(is_send) {}
  Request(Request&& other) noexcept
      : owner_(other.owner_),
        handle_(std::exchange(other.handle_, nullptr)),
        peer_(other.peer_),
        flavor_(other.flavor_),
        is_send_(other.is_send_) {}
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      release();
      owner_ = other.owner_;
      handle_ = std::exchange(other.handle_, nullptr);
      peer_ = other.peer_;
      flavor_ = other.flavor_;
      is_send_ = other.is_send_;
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { release(); }

  int peer() const noexcept { return peer_; }
  bool is_send() const noexcept { return is_send_; }
  bool pending() const noexcept { return handle_ != nullptr; }
  /// True once complete (without progressing). Throws RemoteError when it completed with an
  /// error (the peer died, or the link to it went down).
  inline bool test();

  /// For the owning transport only.
  void* handle() const noexcept { return handle_; }
  unsigned flavor() const noexcept { return flavor_; }
  /// Marks the request complete, its handle already given back by the transport.
  void clear() noexcept { handle_ = nullptr; }

 private:
  inline void release() noexcept;

  Comm* owner_ = nullptr;
  void* handle_ = nullptr;  // nullptr: complete
  int peer_ = -1;
  unsigned flavor_ = 0;
  bool is_send_ = false;
};

/// How a communicator cuts and stages its messages. fragment_bytes 0: every message is one
/// message from and to the caller's buffer (the default). A transport that can read and write
/// the memory directly ignores the engine.
struct StagingConfig {
  std::size_t fragment_bytes = 0;  ///< must be the same on every rank of the job
  int window = 4;                  ///< fragments of one message in flight
  /// Copies messages through bounce buffers (null: fragments go from/to the caller's buffer).
  std::shared_ptr<memory::CopyEngine> engine;
};

class Comm {
 public:
  virtual ~Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  /// The job's out-of-band channel (every rank's bootstrap, for the set-up of a collective).
  bootstrap::Bootstrap& bootstrap() const noexcept { return bootstrap_; }
  /// "ucx", "inproc".
  virtual std::string_view kind() const noexcept = 0;

  /// Non-blocking tagged send/receive of `bytes` contiguous bytes (see the matching rules
  /// above). The buffer must stay valid until the request completes or is dropped.
  virtual Request isend(int peer, Tag tag, const void* buffer, std::size_t bytes) = 0;
  virtual Request irecv(int peer, Tag tag, void* buffer, std::size_t bytes) = 0;

  /// One round of progress. Yields the CPU when the round found nothing to do and the host is
  /// oversubscribed.
  virtual void progress() = 0;
  /// Call inside custom progress loops: every few calls checks the interrupt, the deadline, the
  /// bootstrap's health and `waiting_for`'s connection. Throws TimeoutError naming this rank and
  /// `waiting_for` (with their hosts) when the deadline passed, RemoteError when a rank died.
  virtual void poll_health(std::string_view what, const Deadline& deadline, int waiting_for) = 0;

  /// Waits for the request, progressing, within `deadline`; `what` names the phase.
  void wait(Request& request, std::string_view what, const Deadline& deadline);
  /// Waits for all requests; a timeout names the peer most likely stalled (a pending send's
  /// peer before a pending receive's: a receive may only wait for a rank stalled further on).
  void wait_all(std::span<Request> requests, std::string_view what, const Deadline& deadline);

  /// A fresh sequence number for the next collective operation (wraps, 12 bits). Every rank of
  /// an operation draws the same number as long as they run the same operations.
  std::uint32_t next_op_seq() noexcept { return op_seq_++ & 0xfff; }

  /// Connects to those of `peers` not connected yet. Not collective; sends and receives
  /// connect on first use anyway.
  virtual void connect(std::span<const int> peers) { (void)peers; }
  /// Peers this rank holds a connection to (a ring: 2; a tree: up to 3).
  virtual int connected_count() const noexcept { return 0; }
  /// How this rank reaches `peer`, for the results' transport column ("" for self, or when not
  /// connected).
  virtual std::string transports(int peer) const {
    (void)peer;
    return {};
  }
  /// The RDMA devices ("mlx5_0:1") the connection to `peer` uses, distinct (none: shared
  /// memory, tcp, in-process).
  virtual std::vector<std::string> devices_to(int peer) const {
    (void)peer;
    return {};
  }
  /// Whether the transport registers (pins) user buffers with a NIC to reach `peer`.
  virtual bool registers_memory_for(int peer) const {
    (void)peer;
    return false;
  }
  /// Whether sends and receives may name device (GPU) memory directly; when not, device
  /// buffers travel staged (set_staging with a copy engine).
  virtual bool reads_device_memory() const noexcept { return false; }
  /// The transport library's version ("1.13.1"; "" when there is no library).
  virtual std::string library_version() const { return {}; }

  /// From now on, messages are fragmented and staged as `config` says (all ranks alike).
  virtual void set_staging(StagingConfig config) { staging_ = std::move(config); }
  const StagingConfig& staging() const noexcept { return staging_; }
  /// Bytes of bounce buffers allocated so far (0 when not staging).
  virtual std::size_t bounce_bytes() const noexcept { return 0; }

  /// A barrier over the bootstrap, then an orderly close of every connection. Call at a clean
  /// end.
  virtual void close() = 0;

 protected:
  explicit Comm(bootstrap::Bootstrap& bootstrap) noexcept : bootstrap_(bootstrap) {}

  /// Whether `request` (made by this transport) has completed; on completion its handle is
  /// given back and cleared. Throws RemoteError for a completion with an error.
  virtual bool test(Request& request) = 0;
  /// Gives back a pending request's handle (cancelling a receive). noexcept.
  virtual void release(Request& request) noexcept = 0;

  /// Counts a health poll (wait_all looks for the stalled peer every 16th).
  std::uint32_t next_health_poll() noexcept { return ++health_counter_; }

  StagingConfig staging_;

 private:
  friend class Request;
  /// Which pending request to blame on a timeout.
  int stalled_peer(std::span<Request> requests, std::size_t first_pending);

  bootstrap::Bootstrap& bootstrap_;
  std::uint32_t op_seq_ = 0;
  std::uint32_t health_counter_ = 0;
};

inline bool Request::test() {
  if (handle_ == nullptr) return true;
  return owner_->test(*this);
}

inline void Request::release() noexcept {
  if (handle_ != nullptr) owner_->release(*this);
}

/// Undoes a communicator's staging when a scope ends: whatever set_staging() asked for inside
/// the scope is reset to plain sends and receives on exit, so that a communicator reused by the
/// next body (`ibscope run`) starts unstaged.
class StagingScope {
 public:
  explicit StagingScope(Comm& comm) noexcept : comm_(comm) {}
  /// noexcept: a default StagingConfig has no engine, so set_staging allocates nothing.
  ~StagingScope() noexcept { comm_.set_staging({}); }
  StagingScope(const StagingScope&) = delete;
  StagingScope& operator=(const StagingScope&) = delete;

 private:
  Comm& comm_;
};

}  // namespace ibscope::transport
