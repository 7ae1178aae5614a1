#include "ibscope/probes/rc_link.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "ibscope/core/error.hpp"

namespace ibscope::probes {
namespace {

constexpr int kAllAccess = verbs::kLocalWrite | verbs::kRemoteWrite | verbs::kRemoteRead;

std::uint32_t random_psn() {
  static thread_local std::mt19937 engine(std::random_device{}());
  return engine() & 0xffffffu;
}

}  // namespace

LinkBuffer::LinkBuffer(std::size_t bytes, MemKind kind, int cuda_device) {
  if (kind == MemKind::kCuda) {
    device_ = gpu::DeviceMemory(bytes, cuda_device);
  } else {
    host_ = AlignedBuffer(bytes);
  }
}

RcLink::RcLink(std::shared_ptr<verbs::DeviceContext> device, const verbs::PortInfo& port,
               int gid_index, const LinkConfig& config)
    : device_(std::move(device)), port_(port), gid_index_(gid_index), config_(config) {
  pd_ = verbs::ProtectionDomain::create(device_);
  send_cq_ = verbs::CompletionQueue::create(device_, config.qps * config.tx_depth);
  recv_cq_ =
      verbs::CompletionQueue::create(device_, config.qps * (config.receives ? config.rx_depth : 1));
  const std::size_t qps = static_cast<std::size_t>(config.qps);
  out_.reserve(qps);
  in_.reserve(qps);
  out_mr_.reserve(qps);
  in_mr_.reserve(qps);
  control_.reserve(qps);
  control_mr_.reserve(qps);
  const std::size_t region_bytes = config.buffer_bytes;
  const auto register_buffer = [&](const LinkBuffer& buffer) {
    return buffer.on_device() ? verbs::MemoryRegion::for_device(pd_, buffer.data(), region_bytes,
                                                                kAllAccess, config.registration)
                              : verbs::MemoryRegion(pd_, buffer.data(), region_bytes, kAllAccess);
  };
  for (std::size_t i = 0; i < qps; ++i) {
    out_.emplace_back(region_bytes, config.mem, config.cuda_device);
    in_.emplace_back(region_bytes, config.mem, config.cuda_device);
    out_mr_.push_back(register_buffer(out_.back()));
    in_mr_.push_back(register_buffer(in_.back()));
    control_.emplace_back(128);
    control_mr_.emplace_back(pd_, control_.back().data(), 128, kAllAccess);
    verbs::QpCaps caps{.max_send_wr = config.tx_depth,
                       .max_recv_wr = config.receives ? config.rx_depth : 1,
                       .max_sge = 1,
                       .max_inline_bytes = config.inline_bytes};
    qps_.push_back(std::make_unique<verbs::QueuePair>(pd_, send_cq_, recv_cq_, caps));
    if (i == 0) caps_ = caps;
    caps_.max_send_wr = std::min(caps_.max_send_wr, caps.max_send_wr);
    caps_.max_inline_bytes = std::min(caps_.max_inline_bytes, caps.max_inline_bytes);
    psns_.push_back(random_psn());
  }
  // Receives go in before the peer can send: right after the QP exists (RESET accepts posts
  // on the receive queue only from INIT, so they are posted in connect()).
}

std::vector<verbs::QpAddress> RcLink::addresses() const {
  std::vector<verbs::QpAddress> result;
  for (std::size_t i = 0; i < qps_.size(); ++i) {
    verbs::QpAddress a;
    a.qp_num = qps_[i]->qp_num();
    a.psn = psns_[i];
    a.buffer_addr = reinterpret_cast<std::uint64_t>(in_[i].data());
    a.rkey = in_mr_[i].rkey();
    a.control_addr = reinterpret_cast<std::uint64_t>(control_[i].data());
    a.control_rkey = control_mr_[i].rkey();
    a.lid = port_.lid;
    a.port = port_.port;
    a.active_mtu_code = static_cast<std::uint8_t>(verbs::mtu_bytes_to_code(port_.active_mtu_bytes));
    a.ethernet = port_.ethernet ? 1 : 0;
    a.max_rd_atomic =
        static_cast<std::uint8_t>(std::clamp(device_->limits().max_qp_rd_atom, 0, 255));
    a.max_init_rd_atomic =
        static_cast<std::uint8_t>(std::clamp(device_->limits().max_qp_init_rd_atom, 0, 255));
    if (gid_index_ >= 0) {
      a.gid_index = static_cast<std::uint32_t>(gid_index_);
      for (const auto& gid : port_.gids) {
        if (gid.index == a.gid_index) std::memcpy(a.gid, gid.raw.data(), sizeof(a.gid));
      }
    }
    result.push_back(a);
  }
  return result;
}

void RcLink::connect(std::span<const verbs::QpAddress> remote, const verbs::QpTuning& tuning,
                     const std::string& peer) {
  if (remote.size() != qps_.size()) {
    throw RemoteError(fmt::format("{} sent {} queue pair addresses, this side has {} QPs", peer,
                                  remote.size(), qps_.size()));
  }
  peer_ = peer;
  remote_.assign(remote.begin(), remote.end());
  const auto local = addresses();
  for (std::size_t i = 0; i < qps_.size(); ++i) {
    qps_[i]->connect(local[i], remote[i], tuning, kAllAccess, peer);
  }
  mtu_bytes_ = verbs::negotiate_mtu_bytes(port_.active_mtu_bytes,
                                          verbs::mtu_code_to_bytes(remote[0].active_mtu_code),
                                          tuning.mtu_bytes);
  if (config_.receives) {
    for (int i = 0; i < qps(); ++i) {
      for (int r = 0; r < config_.rx_depth; ++r) post_receive(i);
    }
  }
}

void RcLink::post_receive(int i) const {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(in(i));
  sge.length = static_cast<std::uint32_t>(config_.buffer_bytes);
  sge.lkey = in_lkey(i);
  ibv_recv_wr wr{};
  wr.wr_id = static_cast<std::uint64_t>(i);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  qp(i).post_recv(&wr);
}

}  // namespace ibscope::probes
