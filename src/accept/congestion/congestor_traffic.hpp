#pragma once
// Internal to accept/congestion: the congestors' side of one congested window. The congestors
// run their pattern in rounds until the victims are done. The stop must be agreed, or a
// congestor would wait for data a stopped peer never sends: the first congestor (the leader)
// decides whether each round runs (it has the victims' stop, or not) and tells every other
// congestor while the round before is still in flight, so the load never pauses, all of them
// run the same rounds, and the last one ends with nothing in flight. Once round 0 is done and
// round 1 posted, the leader tells every victim that the load is on.

#include <cstdint>
#include <span>

#include "ibscope/accept/congestion.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::accept::congestion {

struct CongestorLoad {
  std::uint64_t rounds = 0;
  std::uint64_t bytes_received = 0;  ///< this rank's data received over the window
  double seconds = 0;                ///< from the first round to the stop
};

/// Every congestor calls it (`group`: the congestor ranks, ascending; group[0] leads).
/// `victims[0]` sends the stop. Each round's waits end by `timeout_s` (TimeoutError naming the
/// stalled rank and host); the whole window by `window_timeout_s`, naming the victim leader
/// whose stop never came.
CongestorLoad run_congestor(transport::Comm& comm, CongestorPattern pattern,
                            std::span<const int> group, std::span<const int> victims,
                            std::uint64_t bytes, double timeout_s, double window_timeout_s);

}  // namespace ibscope::accept::congestion
