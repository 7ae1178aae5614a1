// SEND latency, as ib_send_lat measures it: ping-pong of sends, each side waiting for its
// receive completion before answering, then reposting the receive. One sample = round trip / 2.
#include <array>

#include "ibscope/core/clock.hpp"
#include "ibscope/probes/engines.hpp"
#include "latency_sender.hpp"

namespace ibscope::probes {

std::vector<double> run_send_latency(const RcLink& link, bool initiator, std::size_t size_bytes,
                                     int warmup, int iterations, ProgressGuard& guard) {
  LatencySender sender(link, IBV_WR_SEND, size_bytes, false);
  std::array<ibv_wc, 1> wc{};
  const auto wait_receive = [&] {
    std::uint32_t spins = 0;
    while (link.recv_cq().poll(1, wc.data()) == 0) {
      if ((++spins & 1023u) == 0) sender.reap(guard);
      guard.tick();
    }
    check_completion(wc[0], link, "RECV");
  };
  const bool single_receive = link.rx_depth() < 2;
  const int total = warmup + iterations;
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(initiator ? iterations : 0));
  for (int i = 0; i < total; ++i) {
    const bool last = i + 1 == total;
    // The consumed receive is replaced once this side's message is on its way (target) or the
    // sample is taken (initiator): the other rx-depth - 1 receives stay posted, so the peer's
    // next message never waits for it, and the round trip carries no receive bookkeeping.
    // (perftest reposts before sending, but stops reposting once the posted receives cover
    // the remaining iterations.) With a single receive (-r 1) it must go back first.
    if (initiator) {
      const auto t0 = Clock::now();
      sender.post(last, guard);
      wait_receive();
      const auto t1 = Clock::now();
      link.post_receive(0);
      if (i >= warmup) samples.push_back(seconds_between(t0, t1) / 2);
    } else {
      wait_receive();
      if (single_receive) link.post_receive(0);
      sender.post(last, guard);
      if (!single_receive) link.post_receive(0);
    }
    guard.progress(static_cast<std::uint64_t>(i + 1), static_cast<std::uint64_t>(total),
                   "ping-pongs");
  }
  sender.finish(guard);
  return samples;
}

}  // namespace ibscope::probes
