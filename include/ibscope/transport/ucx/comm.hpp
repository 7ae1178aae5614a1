#pragma once
/// A job-wide UCX communicator: one context and worker per rank, worker addresses exchanged over
/// the bootstrap, an endpoint to every peer (UCP_ERR_HANDLING_MODE_PEER), and non-blocking tagged
/// sends and receives whose waits have deadlines and name the peer that stalled or died.

#include <sched.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/transport/ucx/context.hpp"
#include "ibscope/transport/ucx/endpoint.hpp"
#include "ibscope/transport/ucx/worker.hpp"

struct ucp_mem;
struct ucp_worker;

namespace ibscope::memory {
class CopyEngine;
}

namespace ibscope::ucx {

class StagedTransfer;
class BouncePool;

/// A tag is [source rank: 20 bits][operation sequence: 12][step: 12][chunk: 20]. Receives match
/// all 64 bits, so the source is part of the match (UCX tag matching ignores the endpoint).
std::uint64_t make_tag(int source_rank, std::uint32_t op_seq, std::uint32_t step,
                       std::uint32_t chunk) noexcept;

/// An outstanding send or receive. Move-only. A receive dropped while pending (an error path)
/// is cancelled, so that UCX never writes into a buffer its owner has freed; a pending send is
/// released and completes on its own (UCX 1.13 cannot cancel tag sends; it only reads).
class Request {
 public:
  Request() noexcept;
  /// `worker` lets a receive dropped while pending be cancelled (nullptr: not cancellable).
  Request(void* ucx_request, int peer, bool is_send, ucp_worker* worker = nullptr) noexcept;
  /// A fragmented or staged message (transport/ucx/staged_transfer).
  Request(std::unique_ptr<StagedTransfer> staged, int peer, bool is_send) noexcept;
  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  int peer() const noexcept { return peer_; }
  bool is_send() const noexcept { return is_send_; }
  /// True once complete (without progressing). Throws RemoteError when it completed with an
  /// error. A completed request releases its UCX resources.
  bool test(const class Comm& comm);
  bool pending() const noexcept { return req_ != nullptr || staged_ != nullptr; }

 private:
  void release() noexcept;
  void* req_ = nullptr;  // nullptr = complete
  std::unique_ptr<StagedTransfer> staged_;
  ucp_worker* worker_ = nullptr;
  int peer_ = -1;
  bool is_send_ = false;
};

/// How this rank cuts and stages its messages (see staged_transfer.hpp). fragment_bytes 0: every
/// message is one UCX message from and to the caller's buffer (the default).
struct StagingConfig {
  std::size_t fragment_bytes = 0;  ///< must be the same on every rank of the job
  int window = 4;                  ///< fragments of one message in flight
  /// Copies messages through bounce buffers (null: fragments go from/to the caller's buffer).
  std::shared_ptr<memory::CopyEngine> engine;
};

/// IBSCOPE_UCX_ERR_MODE: "peer" (default: UCP_ERR_HANDLING_MODE_PEER for every peer) or "cma"
/// (peer mode only for peers on other hosts, so that same-host peers may use UCX's cma).
bool peer_error_handling_everywhere();

class Comm {
 public:
  /// Creates the UCX objects and publishes this rank's worker address. Collective over
  /// `bootstrap`. Endpoints are created when a peer is first sent to or received from, or
  /// beforehand with connect().
  explicit Comm(bootstrap::Bootstrap& bootstrap);
  /// Closes the endpoints (forced when close() was not called). noexcept.
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const noexcept { return bootstrap_.rank(); }
  int size() const noexcept { return bootstrap_.size(); }
  bootstrap::Bootstrap& bootstrap() const noexcept { return bootstrap_; }
  const std::shared_ptr<Context>& context() const noexcept { return context_; }

  /// Creates the endpoints to those of `peers` not connected yet (one address lookup for all;
  /// their hosts become known to the bootstrap). Not collective: each rank names its own peers.
  void connect(std::span<const int> peers);
  bool connected(int peer) const;
  /// Peers this rank has an endpoint to (a ring: 2; a tree: up to 3).
  int connected_count() const noexcept { return connected_; }

  /// From now on, messages are fragmented and staged as `config` says (all ranks alike).
  void set_staging(StagingConfig config);
  const StagingConfig& staging() const noexcept { return staging_; }
  /// Bytes of bounce buffers allocated so far (0 when not staging).
  std::size_t bounce_bytes() const noexcept;

  /// Non-blocking tagged send/receive of `bytes` contiguous bytes. `memh` optional. Fragmented
  /// or staged when set_staging asked for it.
  Request isend(int peer, std::uint64_t tag, const void* buffer, std::size_t bytes,
                ucp_mem* memh = nullptr);
  Request irecv(int peer, std::uint64_t tag, void* buffer, std::size_t bytes,
                ucp_mem* memh = nullptr);

  /// One round of UCX progress. When this host runs more ranks than it has CPU threads, a round
  /// that finds nothing to do yields the CPU (as MPI's yield-when-idle does), so that the rank
  /// that has work can run.
  void progress() {
    const bool moved = worker_->progress();
    if (!staged_.empty()) advance_staged();
    if (!moved && yield_when_idle_) sched_yield();
  }
  bool yields_when_idle() const noexcept { return yield_when_idle_; }

  /// Throws if `peer`'s endpoint has failed (RemoteError naming rank and host).
  void check_peer(int peer, std::string_view what) const;

  /// Waits for all requests, progressing, within `deadline`; `what` names the phase. Throws
  /// TimeoutError naming the peers still pending, RemoteError when a peer failed.
  void wait_all(std::span<Request> requests, std::string_view what, const Deadline& deadline);
  void wait(Request& request, std::string_view what, const Deadline& deadline);

  /// Call inside custom progress loops: every few thousand calls checks the deadline, the
  /// bootstrap's health and the endpoints. `waiting_for` names the peer in a timeout message.
  void poll_health(std::string_view what, const Deadline& deadline, int waiting_for);

  /// A fresh sequence number for the next collective operation (wraps, 12 bits).
  std::uint32_t next_op_seq() noexcept { return op_seq_++ & 0xfff; }

  /// "tag: posix/memory; rma_bw: cma/memory" for `peer` (empty for self).
  std::string transports(int peer) const;

  /// Barrier over the bootstrap, then flush-closes every endpoint. Call at a clean end.
  void close();

 private:
  friend class Request;
  friend class StagedTransfer;
  /// Whether a message of `bytes` goes through a StagedTransfer (staging or fragmenting).
  bool stages(std::size_t bytes) const noexcept;
  Request staged(bool is_send, int peer, std::uint64_t tag, std::byte* user, std::size_t bytes);
  /// One UCX message, never staged.
  Request post_send(int peer, std::uint64_t tag, const void* buffer, std::size_t bytes,
                    ucp_mem* memh = nullptr);
  Request post_recv(int peer, std::uint64_t tag, void* buffer, std::size_t bytes,
                    ucp_mem* memh = nullptr);
  /// Every message in flight through staging moves on at every progress() call, not only when
  /// its own request is tested (a wait tests requests in order).
  void advance_staged();
  void add_staged(StagedTransfer* t) { staged_.push_back(t); }
  void remove_staged(StagedTransfer* t) noexcept;
  [[noreturn]] void throw_peer_error(int peer, int status, std::string_view what) const;

  bootstrap::Bootstrap& bootstrap_;
  std::shared_ptr<Context> context_;
  std::shared_ptr<Worker> worker_;
  std::string address_key_;  // where this Comm's worker addresses are published
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // [rank]; null: self, or not connected yet
  int connected_ = 0;
  bool yield_when_idle_ = false;
  bool always_peer_mode_ = true;
  std::uint32_t op_seq_ = 0;
  std::uint32_t health_counter_ = 0;
  StagingConfig staging_;
  std::unique_ptr<BouncePool> bounce_pool_;
  std::vector<StagedTransfer*> staged_;  // in flight, owned by their Requests
};

}  // namespace ibscope::ucx
