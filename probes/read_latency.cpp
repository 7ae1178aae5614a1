// RDMA READ latency, as ib_read_lat measures it: the initiator reads `size` bytes from the
// target's memory and waits for the completion; one sample is the whole read (request out,
// data back), not halved. The target's CPU takes no part.
#include "ibscope/core/clock.hpp"
#include "ibscope/probes/engines.hpp"
#include "latency_sender.hpp"

namespace ibscope::probes {

std::vector<double> run_read_latency(const RcLink& link, bool initiator, std::size_t size_bytes,
                                     int warmup, int iterations, ProgressGuard& guard) {
  std::vector<double> samples;
  if (!initiator) {
    wait_for_done(link, guard);
    return samples;
  }
  LatencySender sender(link, IBV_WR_RDMA_READ, size_bytes, true);
  const int total = warmup + iterations;
  samples.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < total; ++i) {
    const auto t0 = Clock::now();
    sender.post(true, guard);
    while (sender.reap(guard) == 0) {
    }
    const auto t1 = Clock::now();
    if (i >= warmup) samples.push_back(seconds_between(t0, t1));
    guard.progress(static_cast<std::uint64_t>(i + 1), static_cast<std::uint64_t>(total), "reads");
  }
  send_done(link, guard);  // the target has been waiting on its control word
  return samples;
}

}  // namespace ibscope::probes
