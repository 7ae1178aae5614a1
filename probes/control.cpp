// The control channel of a probe link: heartbeats and the done word, written with RDMA WRITE
// into the peer's control block. A passive target (write/read streams, read latency) sees no
// completions of its own; without this it could only wait blindly in a bootstrap barrier,
// and could tear its queue pair down under a peer that is still measuring.
#include <infiniband/verbs.h>

#include <array>
#include <chrono>
#include <thread>

#include "ibscope/probes/engines.hpp"

namespace ibscope::probes {

void post_control_write(const RcLink& link, int qp, std::uint64_t value, int retires) {
  std::uint64_t* source = link.control_out(qp);
  *source = value;  // stays put until the completion: later values only grow
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(source);
  sge.length = sizeof(std::uint64_t);
  sge.lkey = link.control_lkey(qp);
  ibv_send_wr wr{};
  wr.wr_id = kControlWrId | static_cast<std::uint32_t>(retires);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = link.remote_control_addr(qp);
  wr.wr.rdma.rkey = link.remote_control_rkey(qp);
  link.qp(qp).post_send(&wr);
}

void send_done(const RcLink& link, ProgressGuard& guard) {
  post_control_write(link, 0, kDoneFlag, 1);
  std::array<ibv_wc, 4> wc{};
  while (true) {
    const int n = link.send_cq().poll(static_cast<int>(wc.size()), wc.data());
    for (int i = 0; i < n; ++i) {
      check_completion(wc[static_cast<std::size_t>(i)], link, "RDMA_WRITE (done)");
      if ((wc[static_cast<std::size_t>(i)].wr_id & kControlWrId) != 0) return;
    }
    guard.tick();
  }
}

void wait_for_done(const RcLink& link, ProgressGuard& guard) {
  volatile std::uint64_t* word = link.control_in(0);
  std::uint64_t seen = 0;
  while (true) {
    const std::uint64_t now = *word;
    if ((now & kDoneFlag) != 0) return;
    if (now != seen) {
      seen = now;
      guard.progress(now, 0, "heartbeats from the initiator");
    }
    guard.check();
    // Passive: nothing here is timed, and a target that wakes often takes CPU from the
    // initiator (and, for Soft-RoCE, from the kernel's packet processing): at 1 ms wake-ups
    // ib_write_bw-like streams of 64 KiB lost up to a quarter of their rate in the guest.
    // Heartbeats come every 100 ms; 10 ms still notices the done word and a dead peer promptly.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void reset_control(const RcLink& link) noexcept {
  for (int i = 0; i < link.qps(); ++i) *link.control_in(i) = 0;
}

}  // namespace ibscope::probes
