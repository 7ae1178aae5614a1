// Bandwidth: each QP keeps up to its send-queue depth of messages in flight, one completion
// signalled per `signal_every`; a SEND target reposts each consumed receive at once. Time runs
// from the first post to the last send completion, on the initiating side only.
#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>
#include <vector>

#include "ibscope/core/clock.hpp"
#include "ibscope/probes/engines.hpp"
#include "ibscope/probes/send_window.hpp"
#include "ibscope/probes/slow_nic_hook.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::probes {

void check_completion(const ibv_wc& wc, const RcLink& link, std::string_view posted) {
  if (wc.status == IBV_WC_SUCCESS) return;
  throw verbs::CompletionError(link.device_name(), link.peer(), wc.status, posted, wc.wr_id,
                               wc.qp_num);
}

namespace {

ibv_wr_opcode opcode_of(Verb verb) {
  switch (verb) {
    case Verb::kWrite:
      return IBV_WR_RDMA_WRITE;
    case Verb::kRead:
      return IBV_WR_RDMA_READ;
    case Verb::kSend:
      return IBV_WR_SEND;
  }
  return IBV_WR_SEND;
}

}  // namespace

StreamResult run_stream(const RcLink& link, const StreamSpec& spec, ProgressGuard& guard) {
  const int qps = link.qps();
  const auto size = static_cast<std::uint32_t>(spec.size_bytes);
  const bool inline_ok =
      spec.verb != Verb::kRead && spec.size_bytes <= static_cast<std::size_t>(link.inline_bytes());
  std::vector<SendWindow> windows(static_cast<std::size_t>(qps),
                                  SendWindow(link.tx_depth(), spec.signal_every));
  std::vector<int> posted(static_cast<std::size_t>(qps), 0);
  const std::uint64_t to_send = static_cast<std::uint64_t>(spec.messages_per_qp) * qps;
  const std::uint64_t to_receive = spec.receives_per_qp * static_cast<std::uint64_t>(qps);
  std::uint64_t sent = 0, received = 0;

  StreamResult result;
  result.marks.reserve(static_cast<std::size_t>(
      to_send / static_cast<std::uint64_t>(std::max(spec.signal_every, 1)) +
      static_cast<std::uint64_t>(qps) + 1));
  std::vector<ibv_sge> sges(static_cast<std::size_t>(qps));
  std::vector<ibv_send_wr> wrs(static_cast<std::size_t>(qps));
  for (int q = 0; q < qps; ++q) {
    auto& sge = sges[static_cast<std::size_t>(q)];
    sge.addr = reinterpret_cast<std::uint64_t>(link.out(q));
    sge.length = size;
    sge.lkey = link.out_lkey(q);
    auto& wr = wrs[static_cast<std::size_t>(q)];
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode_of(spec.verb);
    wr.wr.rdma.remote_addr = link.remote_addr(q);
    wr.wr.rdma.rkey = link.remote_rkey(q);
  }

  std::array<ibv_wc, 32> wc{};
  // Test fault hook (slow_nic_hook.hpp): 0 unless IBSCOPE_FAULT_SLOW_NIC names this device.
  const auto slow_nic =
      std::chrono::duration<double, std::micro>(slow_nic_delay_us(link.device_name()));
  const auto t0 = Clock::now();
  auto t_last = t0;
  auto t_heartbeat = t0;
  std::uint64_t heartbeat = *link.control_out(0) & ~kDoneFlag;  // keeps counting up
  while (sent < to_send || received < to_receive) {
    for (int q = 0; q < qps && sent < to_send; ++q) {
      auto& window = windows[static_cast<std::size_t>(q)];
      int& count = posted[static_cast<std::size_t>(q)];
      auto& wr = wrs[static_cast<std::size_t>(q)];
      while (count < spec.messages_per_qp && !window.full()) {
        const bool last = count + 1 == spec.messages_per_qp;
        const bool signalled = window.next_signalled(last);
        wr.send_flags = (signalled ? IBV_SEND_SIGNALED : 0) | (inline_ok ? IBV_SEND_INLINE : 0);
        const int retires = window.posted(signalled);
        wr.wr_id = encode_wr_id(q, retires);
        link.qp(q).post_send(&wr);
        ++count;
      }
    }
    if (sent < to_send) {
      const int n = link.send_cq().poll(static_cast<int>(wc.size()), wc.data());
      if (n > 0 && slow_nic.count() > 0) std::this_thread::sleep_for(slow_nic);
      if (n > 0) {
        const auto now = Clock::now();
        for (int i = 0; i < n; ++i) {
          const std::uint64_t id = wc[static_cast<std::size_t>(i)].wr_id;
          const bool control = (id & kControlWrId) != 0;
          check_completion(wc[static_cast<std::size_t>(i)], link,
                           control ? "RDMA_WRITE (heartbeat)" : to_string(spec.verb));
          const int retires = wr_id_retires(id);
          windows[static_cast<std::size_t>(control ? 0 : wr_id_qp(id))].retired(retires);
          // A heartbeat's completion retires itself and the messages posted before it.
          sent += static_cast<std::uint64_t>(control ? retires - 1 : retires);
          if (!control) result.marks.push_back({seconds_between(t0, now), sent});
        }
        t_last = now;
        guard.progress(sent, to_send, "messages sent");
        // A passive target sees none of this: tell it now and then that we are alive.
        // Only while QP 0 has messages still to post: their final signalled completion then
        // comes after the heartbeat's (one QP completes in order).
        if (seconds_between(t_heartbeat, now) >= kHeartbeatInterval_s && !windows[0].full() &&
            posted[0] < spec.messages_per_qp) {
          SendWindow& w = windows[0];
          const int retires = w.posted(true);
          post_control_write(link, 0, ++heartbeat, retires);
          t_heartbeat = now;
        }
      }
    }
    if (received < to_receive) {
      // Never take more than this stream expects: the peer may already be sending the next
      // stream's messages (warm-up, then timed), and those completions belong to that stream.
      const auto want = static_cast<int>(std::min<std::uint64_t>(wc.size(), to_receive - received));
      const int n = link.recv_cq().poll(want, wc.data());
      for (int i = 0; i < n; ++i) {
        check_completion(wc[static_cast<std::size_t>(i)], link, "RECV");
        link.post_receive(static_cast<int>(wc[static_cast<std::size_t>(i)].wr_id));
        ++received;
      }
      if (n > 0) guard.progress(received, to_receive, "messages received");
    }
    guard.tick();
  }
  result.elapsed_s = to_send > 0 ? seconds_between(t0, t_last) : 0;
  result.messages = sent;
  if (spec.send_done) send_done(link, guard);
  return result;
}

}  // namespace ibscope::probes
