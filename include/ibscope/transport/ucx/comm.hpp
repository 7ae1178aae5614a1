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
#include "ibscope/transport/comm.hpp"
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

using transport::make_tag;
using transport::Request;
using transport::StagingConfig;
using transport::StagingScope;

/// IBSCOPE_UCX_ERR_MODE: "peer" (default: UCP_ERR_HANDLING_MODE_PEER for every peer) or "cma"
/// (peer mode only for peers on other hosts, so that same-host peers may use UCX's cma).
bool peer_error_handling_everywhere();

/// The UCX implementation of the point-to-point seam (transport/comm.hpp).
class Comm final : public transport::Comm {
 public:
  /// Creates the UCX objects and publishes this rank's worker address. Collective over
  /// `bootstrap`. Endpoints are created when a peer is first sent to or received from, or
  /// beforehand with connect().
  explicit Comm(bootstrap::Bootstrap& bootstrap);
  /// Closes the endpoints (forced when close() was not called). noexcept.
  ~Comm() override;

  std::string_view kind() const noexcept override { return "ucx"; }
  const std::shared_ptr<Context>& context() const noexcept { return context_; }

  /// Creates the endpoints to those of `peers` not connected yet (one address lookup for all;
  /// their hosts become known to the bootstrap). Not collective: each rank names its own peers.
  void connect(std::span<const int> peers) override;
  bool connected(int peer) const;
  int connected_count() const noexcept override { return connected_; }

  /// From now on, messages are fragmented and staged as `config` says (all ranks alike).
  void set_staging(StagingConfig config) override;
  std::size_t bounce_bytes() const noexcept override;

  /// Non-blocking tagged send/receive of `bytes` contiguous bytes. `memh` optional. Fragmented
  /// or staged when set_staging asked for it.
  Request isend(int peer, transport::Tag tag, const void* buffer, std::size_t bytes) override {
    return isend(peer, tag, buffer, bytes, nullptr);
  }
  Request irecv(int peer, transport::Tag tag, void* buffer, std::size_t bytes) override {
    return irecv(peer, tag, buffer, bytes, nullptr);
  }
  Request isend(int peer, transport::Tag tag, const void* buffer, std::size_t bytes, ucp_mem* memh);
  Request irecv(int peer, transport::Tag tag, void* buffer, std::size_t bytes, ucp_mem* memh);

  /// One round of UCX progress. When this host runs more ranks than it has CPU threads, a round
  /// that finds nothing to do yields the CPU (as MPI's yield-when-idle does), so that the rank
  /// that has work can run.
  void progress() override {
    const bool moved = worker_->progress();
    if (!staged_.empty()) advance_staged();
    if (!moved && yield_when_idle_) sched_yield();
  }
  bool yields_when_idle() const noexcept { return yield_when_idle_; }

  /// Throws if `peer`'s endpoint has failed (RemoteError naming rank and host).
  void check_peer(int peer, std::string_view what) const;

  void poll_health(std::string_view what, const Deadline& deadline, int waiting_for) override;

  /// "tag: posix/memory; rma_bw: cma/memory" for `peer` (empty for self).
  std::string transports(int peer) const override;
  std::vector<std::string> devices_to(int peer) const override;
  bool registers_memory_for(int peer) const override;
  bool reads_device_memory() const noexcept override;
  std::string library_version() const override { return Context::version(); }

  /// Barrier over the bootstrap, then flush-closes every endpoint. Call at a clean end.
  void close() override;

 private:
  friend class StagedTransfer;
  /// Request flavors: a UCP request, or a StagedTransfer this Comm allocated.
  static constexpr unsigned kUcpRequest = 0;
  static constexpr unsigned kStaged = 1;

  bool test(Request& request) override;
  void release(Request& request) noexcept override;
  /// Whether a message of `bytes` goes through a StagedTransfer (staging or fragmenting).
  bool stages(std::size_t bytes) const noexcept;
  Request staged(bool is_send, int peer, transport::Tag tag, std::byte* user, std::size_t bytes);
  /// One UCX message, never staged.
  Request post_send(int peer, transport::Tag tag, const void* buffer, std::size_t bytes,
                    ucp_mem* memh = nullptr);
  Request post_recv(int peer, transport::Tag tag, void* buffer, std::size_t bytes,
                    ucp_mem* memh = nullptr);
  /// Every message in flight through staging moves on at every progress() call, not only when
  /// its own request is tested (a wait tests requests in order).
  void advance_staged();
  void add_staged(StagedTransfer* t) { staged_.push_back(t); }
  void remove_staged(StagedTransfer* t) noexcept;
  [[noreturn]] void throw_peer_error(int peer, int status, std::string_view what) const;

  std::shared_ptr<Context> context_;
  std::shared_ptr<Worker> worker_;
  std::string address_key_;  // where this Comm's worker addresses are published
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // [rank]; null: self, or not connected yet
  int connected_ = 0;
  bool yield_when_idle_ = false;
  bool always_peer_mode_ = true;
  std::unique_ptr<BouncePool> bounce_pool_;
  std::vector<StagedTransfer*> staged_;  // in flight, owned by their Requests
};

}  // namespace ibscope::ucx
