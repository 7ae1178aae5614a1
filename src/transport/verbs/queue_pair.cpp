#include "ibscope/transport/verbs/queue_pair.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ibscope/core/error.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/memory_region.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

void destroy_qp(ibv_qp* qp) noexcept { api().destroy_qp(qp); }

std::uint32_t negotiate_mtu_bytes(std::uint32_t local_active, std::uint32_t remote_active,
                                  std::uint32_t requested) {
  const std::uint32_t path = std::min(local_active, remote_active);
  if (requested == 0) return path;
  if (mtu_bytes_to_code(requested) == 0) {
    throw UsageError(fmt::format("MTU {} is not one of 256, 512, 1024, 2048, 4096", requested));
  }
  if (requested > path) {
    throw UsageError(fmt::format(
        "MTU {} is above the path's active MTU {} (local {}, remote {}): ask for {} or less",
        requested, path, local_active, remote_active, path));
  }
  return requested;
}

QueuePair::QueuePair(std::shared_ptr<ProtectionDomain> pd, std::shared_ptr<CompletionQueue> send_cq,
                     std::shared_ptr<CompletionQueue> recv_cq, QpCaps& caps)
    : pd_(std::move(pd)), send_cq_(std::move(send_cq)), recv_cq_(std::move(recv_cq)) {
  ibv_qp_init_attr init{};
  init.send_cq = send_cq_->get();
  init.recv_cq = recv_cq_->get();
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;
  init.cap.max_send_wr = static_cast<std::uint32_t>(caps.max_send_wr);
  init.cap.max_recv_wr = static_cast<std::uint32_t>(caps.max_recv_wr);
  init.cap.max_send_sge = static_cast<std::uint32_t>(caps.max_sge);
  init.cap.max_recv_sge = static_cast<std::uint32_t>(caps.max_sge);
  init.cap.max_inline_data = static_cast<std::uint32_t>(caps.max_inline_bytes);
  ibv_qp* qp = api().create_qp(pd_->get(), &init);
  if (qp == nullptr) {
    throw VerbsError("ibv_create_qp", pd_->device().name(), errno,
                     fmt::format("RC, send {} / recv {} work requests, inline {} B",
                                 caps.max_send_wr, caps.max_recv_wr, caps.max_inline_bytes),
                     "lower -t/--tx-depth or -I/--inline-size");
  }
  handle_ = Handle<ibv_qp*, destroy_qp>(qp);
  caps.max_send_wr = static_cast<int>(init.cap.max_send_wr);
  caps.max_recv_wr = static_cast<int>(init.cap.max_recv_wr);
  caps.max_inline_bytes = static_cast<int>(init.cap.max_inline_data);
}

std::uint32_t QueuePair::qp_num() const noexcept { return handle_.get()->qp_num; }

void QueuePair::connect(const QpAddress& local, const QpAddress& remote, const QpTuning& tuning,
                        int access, const std::string& peer) {
  peer_ = peer;
  const std::string& device = pd_->device().name();
  const auto modify = [&](ibv_qp_attr& attr, int mask, const char* state) {
    if (const int rc = api().modify_qp(get(), &attr, mask); rc != 0) {
      throw VerbsError(
          fmt::format("ibv_modify_qp({})", state), device, rc,
          fmt::format("qp 0x{:x} towards {} (remote qp 0x{:x})", qp_num(), peer, remote.qp_num));
    }
  };

  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.pkey_index = static_cast<std::uint16_t>(tuning.pkey_index);
  init.port_num = local.port;
  init.qp_access_flags = ((access & kRemoteWrite) != 0 ? IBV_ACCESS_REMOTE_WRITE : 0) |
                         ((access & kRemoteRead) != 0 ? IBV_ACCESS_REMOTE_READ : 0) |
                         ((access & kLocalWrite) != 0 ? IBV_ACCESS_LOCAL_WRITE : 0);
  modify(init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");

  const std::uint32_t mtu =
      negotiate_mtu_bytes(mtu_code_to_bytes(local.active_mtu_code),
                          mtu_code_to_bytes(remote.active_mtu_code), tuning.mtu_bytes);
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = static_cast<ibv_mtu>(mtu_bytes_to_code(mtu));
  rtr.dest_qp_num = remote.qp_num;
  rtr.rq_psn = remote.psn;
  // Reads we accept as target: what our device allows and the peer may have outstanding.
  rtr.max_dest_rd_atomic =
      std::max<std::uint8_t>(1, std::min(local.max_rd_atomic, remote.max_init_rd_atomic));
  rtr.min_rnr_timer = static_cast<std::uint8_t>(tuning.min_rnr_timer);
  rtr.ah_attr.dlid = remote.lid;
  rtr.ah_attr.sl = static_cast<std::uint8_t>(tuning.service_level);
  rtr.ah_attr.port_num = local.port;
  if (remote.ethernet != 0 || local.ethernet != 0 || remote.lid == 0) {
    rtr.ah_attr.is_global = 1;
    std::memcpy(rtr.ah_attr.grh.dgid.raw, remote.gid, sizeof(remote.gid));
    rtr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
    rtr.ah_attr.grh.hop_limit = static_cast<std::uint8_t>(tuning.hop_limit);
    rtr.ah_attr.grh.traffic_class = static_cast<std::uint8_t>(tuning.traffic_class);
  }
  modify(rtr,
         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
         "RTR");

  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = static_cast<std::uint8_t>(tuning.timeout);
  rts.retry_cnt = static_cast<std::uint8_t>(tuning.retry_count);
  rts.rnr_retry = static_cast<std::uint8_t>(tuning.rnr_retry);
  rts.sq_psn = local.psn;
  rts.max_rd_atomic =
      std::max<std::uint8_t>(1, std::min(local.max_init_rd_atomic, remote.max_rd_atomic));
  modify(rts,
         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC,
         "RTS");
}

void QueuePair::post_send(ibv_send_wr* wr) const {
  ibv_send_wr* bad = nullptr;
  if (const int rc = api().post_send(get(), wr, &bad); rc != 0) {
    throw VerbsError("ibv_post_send", pd_->device().name(), rc,
                     fmt::format("qp 0x{:x} towards {}", qp_num(), peer_));
  }
}

void QueuePair::post_recv(ibv_recv_wr* wr) const {
  ibv_recv_wr* bad = nullptr;
  if (const int rc = api().post_recv(get(), wr, &bad); rc != 0) {
    throw VerbsError("ibv_post_recv", pd_->device().name(), rc,
                     fmt::format("qp 0x{:x} towards {}", qp_num(), peer_));
  }
}

}  // namespace ibscope::verbs
