#pragma once
/// Clock offsets between ranks, so that timestamps taken on different hosts (each on its own
/// steady_clock) can be put on one time axis: rank 0 exchanges a few ping-pongs with every
/// rank; the peer answers with its clock reading; the exchange with the shortest round trip
/// gives offset = remote - (send + receive) / 2, uncertain by at most half that round trip
/// (Cristian's method). Good to microseconds on one switch hop; enough to tell which rank
/// arrives last at a collective taking tens of microseconds or more.

#include <span>
#include <vector>

#include "ibscope/core/clock.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::measure {

struct ClockSample {
  double local_send_s = 0;  ///< rank 0's clock when it sent the ping
  double remote_s = 0;      ///< the peer's clock when it answered
  double local_recv_s = 0;  ///< rank 0's clock when the answer arrived
};

struct ClockOffset {
  double offset_s = 0;       ///< peer clock - rank 0 clock
  double uncertainty_s = 0;  ///< half the best round trip
};

/// Pure: the estimate from the sample with the shortest round trip. Empty input: zero offset
/// with infinite uncertainty.
ClockOffset estimate_offset(std::span<const ClockSample> samples);

/// Seconds on this process's steady_clock (the same epoch for every thread of one host).
double steady_now_s() noexcept;
/// `t` as steady_now_s() would have given it then.
double seconds_of(Clock::time_point t) noexcept;

/// Collective over `comm`: returns on rank 0 the offset of every rank ([0] is zero); other
/// ranks get an empty vector. Throws TimeoutError / RemoteError naming the peer.
std::vector<ClockOffset> measure_clock_offsets(transport::Comm& comm, int samples_per_rank,
                                               double timeout_s);

}  // namespace ibscope::measure
