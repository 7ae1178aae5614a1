// RDMA WRITE latency, as ib_write_lat measures it: the initiator writes `size` bytes whose
// last byte carries the iteration's marker; the target spins on that byte in its own memory,
// then writes back the same way. One sample = round trip / 2. No receive queue is involved.
#include <algorithm>

#include "ibscope/core/clock.hpp"
#include "ibscope/probes/engines.hpp"
#include "latency_sender.hpp"

namespace ibscope::probes {

std::vector<double> run_write_latency(const RcLink& link, bool initiator, std::size_t size_bytes,
                                      int warmup, int iterations, ProgressGuard& guard) {
  LatencySender sender(link, IBV_WR_RDMA_WRITE, size_bytes, false);
  // The marker byte the peer's write lands in; volatile: the NIC, not this thread, changes it.
  volatile auto* arrived = reinterpret_cast<volatile std::uint8_t*>(link.in(0) + size_bytes - 1);
  auto* outgoing = reinterpret_cast<std::uint8_t*>(link.out(0) + size_bytes - 1);
  const int total = warmup + iterations;
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(initiator ? iterations : 0));

  const auto wait_for = [&](std::uint8_t marker) {
    std::uint32_t spins = 0;
    while (*arrived != marker) {
      // A failed write shows up only as a completion error: look now and then.
      if ((++spins & 1023u) == 0) sender.reap(guard);
      guard.tick();
    }
  };

  for (int i = 0; i < total; ++i) {
    const auto marker = static_cast<std::uint8_t>(i % 255 + 1);
    const bool last = i + 1 == total;
    if (initiator) {
      const auto t0 = Clock::now();
      *outgoing = marker;
      sender.post(last, guard);
      wait_for(marker);
      const auto t1 = Clock::now();
      if (i >= warmup) samples.push_back(seconds_between(t0, t1) / 2);
    } else {
      wait_for(marker);
      *outgoing = marker;
      sender.post(last, guard);
    }
    guard.progress(static_cast<std::uint64_t>(i + 1), static_cast<std::uint64_t>(total),
                   "ping-pongs");
  }
  sender.finish(guard);
  return samples;
}

}  // namespace ibscope::probes
