#pragma once
/// A reliable-connected queue pair (ibv_qp, IBV_QPT_RC) and its bring-up RESET -> INIT -> RTR
/// -> RTS from this side's and the peer's QpAddress. Every parameter comes from a port query,
/// the peer's address, or QpTuning (flags with documented defaults), never a constant here.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "ibscope/core/handle.hpp"
#include "ibscope/transport/verbs/completion_queue.hpp"
#include "ibscope/transport/verbs/protection_domain.hpp"

struct ibv_qp;
struct ibv_send_wr;
struct ibv_recv_wr;

namespace ibscope::verbs {

void destroy_qp(ibv_qp* qp) noexcept;

/// What a peer needs to reach this QP and its buffer. Crosses the bootstrap as raw bytes.
struct QpAddress {
  std::uint32_t qp_num = 0;
  std::uint32_t psn = 0;  ///< initial packet sequence number (24 bits)
  std::uint64_t buffer_addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t gid_index = 0;
  std::uint8_t gid[16] = {};
  std::uint16_t lid = 0;
  std::uint8_t port = 1;
  std::uint8_t active_mtu_code = 0;     ///< IBV_MTU_* of the port
  std::uint8_t ethernet = 0;            ///< RoCE: address by GID, not LID
  std::uint8_t max_rd_atomic = 0;       ///< reads this QP accepts as a target (max_qp_rd_atom)
  std::uint8_t max_init_rd_atomic = 0;  ///< reads it may have outstanding as initiator
  std::uint8_t reserved = 0;
  /// A second, small region the peer may write (the probes' control block, kept in host memory
  /// when the message buffer is GPU memory); 0 when unused.
  std::uint64_t control_addr = 0;
  std::uint32_t control_rkey = 0;
  std::uint32_t reserved2 = 0;
};
static_assert(std::is_trivially_copyable_v<QpAddress>);

/// Connection parameters; the defaults are perftest's, each has a probe flag.
struct QpTuning {
  std::uint32_t mtu_bytes = 0;  ///< 0: the smaller active MTU of the two ports
  int timeout = 14;             ///< local ACK timeout, 4.096 us x 2^timeout
  int retry_count = 7;
  int rnr_retry = 7;       ///< 7 = retry forever on receiver-not-ready
  int min_rnr_timer = 12;  ///< IB spec code 12 = 0.64 ms
  int service_level = 0;
  int traffic_class = 0;
  int hop_limit = 64;
  int pkey_index = 0;
};

struct QpCaps {
  int max_send_wr = 128;
  int max_recv_wr = 128;
  int max_sge = 1;
  int max_inline_bytes = 0;
};

class QueuePair {
 public:
  /// Creates an RC QP; `caps` is updated to what the device granted (max_inline_bytes may be
  /// less than asked: the caller decides whether that is acceptable). Throws VerbsError.
  QueuePair(std::shared_ptr<ProtectionDomain> pd, std::shared_ptr<CompletionQueue> send_cq,
            std::shared_ptr<CompletionQueue> recv_cq, QpCaps& caps);

  ibv_qp* get() const noexcept { return handle_.get(); }
  std::uint32_t qp_num() const noexcept;
  const DeviceContext& device() const noexcept { return pd_->device(); }

  /// INIT -> RTR -> RTS towards `remote`. `peer` names it in errors ("peer rank 1 (host b)").
  /// Throws VerbsError naming the transition (e.g. "ibv_modify_qp(RTR)").
  void connect(const QpAddress& local, const QpAddress& remote, const QpTuning& tuning, int access,
               const std::string& peer);

  /// Throw VerbsError with the peer when the post is refused.
  void post_send(ibv_send_wr* wr) const;
  void post_recv(ibv_recv_wr* wr) const;

 private:
  std::shared_ptr<ProtectionDomain> pd_;
  std::shared_ptr<CompletionQueue> send_cq_, recv_cq_;
  Handle<ibv_qp*, destroy_qp> handle_;
  std::string peer_;
};

/// The path MTU both sides can use: min of the two active MTUs and the requested one (0: no
/// request). Throws UsageError when the request is not 256..4096 or above the ports' MTU.
std::uint32_t negotiate_mtu_bytes(std::uint32_t local_active, std::uint32_t remote_active,
                                  std::uint32_t requested);

}  // namespace ibscope::verbs
