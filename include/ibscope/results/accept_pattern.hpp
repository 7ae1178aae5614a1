#pragma once
/// One round of `ibscope accept --pattern` as the "acceptance" section keeps it
/// (accept/pattern_verdict.hpp judges it): the flows that ran at once, the hub's aggregate
/// against what its link should carry, Jain's fairness index, and the congestion the round's
/// counters show.

#include <cstdint>
#include <string>
#include <vector>

namespace ibscope::results {

struct AcceptPatternFlow {
  std::string host_src, host_dst;
  double bw_gbps = 0;  ///< GB/s (1e9 B/s)
};

struct AcceptPattern {
  std::string pattern;  ///< "incast:3", "one-to-many:2", "bisection"
  int round = 0;
  std::string hub_host;  ///< incast: the receiver, one-to-many: the sender; "" for bisection
  std::uint64_t size_bytes = 0;
  std::vector<AcceptPatternFlow> flows;
  double aggregate_gbps = 0;  ///< all flows' bytes / the slowest flow's time
  double expected_gbps = 0;   ///< what the aggregate should reach; 0: no absolute test
  double fairness_jain = 1;
  bool pass = true;
  std::string reason;         ///< why it failed, naming the hub and the flows; "" when it passed
  double congestion_pct = 0;  ///< the largest congestion share of the round's NICs (percent)
  std::string congestion;     ///< the congestion finding ("" below the finding threshold)
};

}  // namespace ibscope::results
