#pragma once
/// Stalls: iterations of a measurement that took far longer than its others — a link that went
/// down for a moment, a peer descheduled for a while. A stall is reported in the row (and as a
/// warning) instead of being averaged away or ending the run. Pure; unit-tested.
///
/// An iteration stalls when its time exceeds BOTH stall_factor x the median iteration and the
/// median plus min_stall_us: a 2 s outage in a 10 ms loop is a stall, a 50 us scheduling hiccup
/// in a 5 us ping-pong is not.

#include <vector>

namespace ibscope::measure {

struct Stall {
  int iteration = 0;     ///< index among the timed iterations
  double time_us = 0;    ///< how long that iteration took
  double median_us = 0;  ///< the median iteration of the same measurement
};

struct StallCriteria {
  double stall_factor = 10;
  double min_stall_us = 250'000;
};

std::vector<Stall> find_stalls(const std::vector<double>& samples_us,
                               const StallCriteria& criteria = {});

}  // namespace ibscope::measure
