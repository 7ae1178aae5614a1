#pragma once
// Internal to accept/congestion: the victims' side of one window (isolated or congested):
// 8 B ping-pong between victim pairs, then the all-reduce among the victims, each iteration
// timed. Under a congestor the victims start once the congestor leader says the load is on,
// and when every victim is done the victim leader tells the congestor leader to stop.

#include <cstdint>
#include <vector>

#include "ibscope/accept/congestion.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::accept::congestion {

struct VictimSpec {
  std::uint64_t latency_bytes = 8;
  int latency_iters = 200;
  std::uint64_t allreduce_bytes = 1ULL << 20;
  int allreduce_iters = 20;
  int warmup = 2;
  double timeout_s = 60;
};

struct VictimWindow {
  std::vector<double> half_rtt_us;   ///< timed ping-pongs (the first rank of a pair only)
  std::vector<double> iteration_us;  ///< timed all-reduce iterations, this rank's view
};

/// Every victim calls it. `congestor_leader` >= 0: a congested window (wait for its "load on",
/// send it the stop at the end). Each wait ends by spec.timeout_s (TimeoutError naming the
/// stalled rank and host). Draws warmup + allreduce_iters operation sequence numbers.
/// Throws VerificationError when the all-reduce's result is wrong.
VictimWindow run_victim(transport::Comm& comm, const CongestionSplit& split, const VictimSpec& spec,
                        int congestor_leader);

}  // namespace ibscope::accept::congestion
