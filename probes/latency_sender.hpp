#pragma once
// Pieces the three latency loops share: one QP (index 0), a prepared work request, and a send
// queue that is drained before the loop returns so the next size starts with it empty.

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>

#include "ibscope/probes/engines.hpp"
#include "ibscope/probes/send_window.hpp"

namespace ibscope::probes {

class LatencySender {
 public:
  LatencySender(const RcLink& link, ibv_wr_opcode opcode, std::size_t size_bytes,
                bool always_signal)
      : link_(link),
        always_signal_(always_signal),
        window_(link.tx_depth(), always_signal ? 1 : std::max(1, link.tx_depth() / 2)) {
    sge_.addr = reinterpret_cast<std::uint64_t>(link.out(0));
    sge_.length = static_cast<std::uint32_t>(size_bytes);
    sge_.lkey = link.out_lkey(0);
    wr_.sg_list = &sge_;
    wr_.num_sge = 1;
    wr_.opcode = opcode;
    wr_.wr.rdma.remote_addr = link.remote_addr(0);
    wr_.wr.rdma.rkey = link.remote_rkey(0);
    posted_ = opcode == IBV_WR_RDMA_WRITE  ? to_string(Verb::kWrite)
              : opcode == IBV_WR_RDMA_READ ? to_string(Verb::kRead)
                                           : to_string(Verb::kSend);
    inline_ =
        opcode != IBV_WR_RDMA_READ && size_bytes <= static_cast<std::size_t>(link.inline_bytes());
  }

  /// Posts one message; `last` signals it so that finish() can retire everything. A signalled
  /// message (with the default tx depth of 1, every one) is retired right after the post, as
  /// perftest does: its completion (the peer's ACK) arrives while the peer is still turning the
  /// message around, so waiting for it here overlaps the peer's work. Retiring it only when the
  /// next post found the queue full put a send-queue poll on the critical path of every round
  /// trip, on both sides.
  void post(bool last, ProgressGuard& guard) {
    while (window_.full()) reap(guard);
    const bool signalled = window_.next_signalled(last);
    wr_.send_flags = (signalled ? IBV_SEND_SIGNALED : 0) | (inline_ ? IBV_SEND_INLINE : 0);
    wr_.wr_id = encode_wr_id(0, window_.posted(signalled));
    link_.qp(0).post_send(&wr_);
    if (signalled && !always_signal_) finish(guard);
  }

  /// Polls the send queue once; returns the completions seen.
  int reap(ProgressGuard& guard) {
    const int n = link_.send_cq().poll(static_cast<int>(wc_.size()), wc_.data());
    for (int i = 0; i < n; ++i) {
      check_completion(wc_[static_cast<std::size_t>(i)], link_, posted_);
      window_.retired(wr_id_retires(wc_[static_cast<std::size_t>(i)].wr_id));
    }
    guard.tick();
    return n;
  }

  /// Waits until every posted message is retired.
  void finish(ProgressGuard& guard) {
    while (window_.in_flight > 0) reap(guard);
  }

 private:
  const RcLink& link_;
  bool always_signal_;  // the caller waits for every completion itself (reads)
  SendWindow window_;
  ibv_sge sge_{};
  ibv_send_wr wr_{};
  bool inline_ = false;
  std::string_view posted_;
  std::array<ibv_wc, 16> wc_{};
};

}  // namespace ibscope::probes
