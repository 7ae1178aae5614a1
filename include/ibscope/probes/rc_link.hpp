#pragma once
/// One rank's end of a probe connection to one peer: a protection domain, a send and a receive
/// completion queue, `qps` RC queue pairs, and per QP two registered buffers: `out` (the source
/// of writes and sends, the destination of reads) and `in` (what the peer writes, sends into
/// or reads), in host memory or GPU memory (LinkConfig::mem). The peer learns the `in` buffer
/// from QpAddress. Per QP a separate control block in host memory (registered on its own, so
/// that the CPU can poll it whatever the buffers are) holds the word the peer writes into and
/// the word this side writes from: the initiator of a stream writes a heartbeat count and
/// finally a done word there, so a target that sees no traffic of its own still knows its peer
/// is alive and when it has finished.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ibscope/core/aligned_buffer.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "ibscope/probes/probe_options.hpp"
#include "ibscope/transport/verbs/completion_queue.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/memory_region.hpp"
#include "ibscope/transport/verbs/queue_pair.hpp"

namespace ibscope::probes {

struct LinkConfig {
  int qps = 1;
  int tx_depth = 128;
  int rx_depth = 512;
  int inline_bytes = 0;             ///< asked for; the device may grant less
  std::size_t buffer_bytes = 4096;  ///< per buffer: the largest message
  bool receives = false;            ///< keep rx_depth receives posted on every QP (send tests)
  MemKind mem = MemKind::kHost;     ///< where `out` and `in` live
  int cuda_device = -1;             ///< the CUDA ordinal for MemKind::kCuda
  /// Tests: how GPU memory is registered (empty: the real dma-buf export and peermem check).
  verbs::DeviceRegistrationHooks registration;
};

/// One message buffer of a link: host memory (page-aligned) or device memory. Move-only.
class LinkBuffer {
 public:
  /// Throws what AlignedBuffer or gpu::DeviceMemory throw.
  LinkBuffer(std::size_t bytes, MemKind kind, int cuda_device);
  std::byte* data() const noexcept {
    return device_.data() != nullptr ? device_.data() : host_.data();
  }
  bool on_device() const noexcept { return device_.data() != nullptr; }

 private:
  AlignedBuffer host_;
  gpu::DeviceMemory device_;
};

class RcLink {
 public:
  /// Creates every resource and posts the receives; throws VerbsError, EnvironmentError when
  /// GPU memory cannot be registered. `gid_index` < 0 addresses the peer by LID (InfiniBand
  /// without GRH).
  RcLink(std::shared_ptr<verbs::DeviceContext> device, const verbs::PortInfo& port, int gid_index,
         const LinkConfig& config);

  /// This side's address per QP, to send to the peer.
  std::vector<verbs::QpAddress> addresses() const;
  /// Brings every QP to RTS towards the peer's addresses (same count). Throws VerbsError.
  void connect(std::span<const verbs::QpAddress> remote, const verbs::QpTuning& tuning,
               const std::string& peer);

  int qps() const noexcept { return static_cast<int>(qps_.size()); }
  const verbs::QueuePair& qp(int i) const { return *qps_.at(static_cast<std::size_t>(i)); }
  const verbs::CompletionQueue& send_cq() const noexcept { return *send_cq_; }
  const verbs::CompletionQueue& recv_cq() const noexcept { return *recv_cq_; }
  std::byte* out(int i) const noexcept { return out_[static_cast<std::size_t>(i)].data(); }
  std::byte* in(int i) const noexcept { return in_[static_cast<std::size_t>(i)].data(); }
  std::uint32_t out_lkey(int i) const noexcept {
    return out_mr_[static_cast<std::size_t>(i)].lkey();
  }
  std::uint32_t in_lkey(int i) const noexcept { return in_mr_[static_cast<std::size_t>(i)].lkey(); }
  std::uint64_t remote_addr(int i) const noexcept {
    return remote_[static_cast<std::size_t>(i)].buffer_addr;
  }
  std::uint32_t remote_rkey(int i) const noexcept {
    return remote_[static_cast<std::size_t>(i)].rkey;
  }
  /// Send queue depth and inline size the device granted.
  int tx_depth() const noexcept { return caps_.max_send_wr; }
  int inline_bytes() const noexcept { return caps_.max_inline_bytes; }
  int rx_depth() const noexcept { return config_.rx_depth; }
  std::uint32_t mtu_bytes() const noexcept { return mtu_bytes_; }
  std::size_t buffer_bytes() const noexcept { return config_.buffer_bytes; }
  const std::string& peer() const noexcept { return peer_; }
  const std::string& device_name() const noexcept { return device_->name(); }
  /// Whether the message buffers are GPU memory, and how they were registered.
  bool on_device() const noexcept { return !in_.empty() && in_.front().on_device(); }
  verbs::RegistrationMethod registration() const noexcept { return in_mr_.front().method(); }
  /// The control word the peer writes into, and the one this side writes from (host memory).
  volatile std::uint64_t* control_in(int i) const noexcept {
    return reinterpret_cast<volatile std::uint64_t*>(control_[static_cast<std::size_t>(i)].data());
  }
  std::uint64_t* control_out(int i) const noexcept {
    return reinterpret_cast<std::uint64_t*>(control_[static_cast<std::size_t>(i)].data() + 64);
  }
  std::uint32_t control_lkey(int i) const noexcept {
    return control_mr_[static_cast<std::size_t>(i)].lkey();
  }
  std::uint64_t remote_control_addr(int i) const noexcept {
    return remote_[static_cast<std::size_t>(i)].control_addr;
  }
  std::uint32_t remote_control_rkey(int i) const noexcept {
    return remote_[static_cast<std::size_t>(i)].control_rkey;
  }
  /// Posts one receive of the whole `in` buffer of QP i (wr_id = i). Throws VerbsError.
  void post_receive(int i) const;

 private:
  std::shared_ptr<verbs::DeviceContext> device_;
  verbs::PortInfo port_;
  int gid_index_;
  LinkConfig config_;
  verbs::QpCaps caps_;
  std::shared_ptr<verbs::ProtectionDomain> pd_;
  std::shared_ptr<verbs::CompletionQueue> send_cq_, recv_cq_;
  std::vector<LinkBuffer> out_, in_;
  std::vector<verbs::MemoryRegion> out_mr_, in_mr_;
  std::vector<AlignedBuffer> control_;  // 128 B per QP: [0, 64) in, [64, 128) out
  std::vector<verbs::MemoryRegion> control_mr_;
  std::vector<std::unique_ptr<verbs::QueuePair>> qps_;
  std::vector<std::uint32_t> psns_;
  std::vector<verbs::QpAddress> remote_;
  std::uint32_t mtu_bytes_ = 0;
  std::string peer_;
};

}  // namespace ibscope::probes
