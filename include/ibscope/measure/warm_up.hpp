#pragma once
/// Warm-up by time as well as by count (docs/methodology.md, "Warm-up"). A size's first calls
/// pay for what the transport sets up on first use: over UCX shared memory each of the 64
/// receive slots of the shm FIFO (UCX_SYSV_FIFO_SIZE) faults in its 8 KiB descriptor the first
/// time a bcopy message lands in it, so the first ~30 calls of a 1 KiB all-reduce on 2 ranks
/// took 6-10 us instead of 2 (measured: 0-2 slow calls with a 16-slot FIFO, ~120 with 256), and
/// `-w 5` left most of them in the timed loop. A count cannot know how many calls a transport's
/// resources need; a time floor covers them at every size where a call is short and costs
/// nothing where -w calls already take longer.
///
/// Every rank must make the same number of calls, so rank 0 decides: after each round of calls
/// it measures the time since the warm-up began and tells every rank, over the bootstrap, how
/// many more calls to make (0: warm). The per-call estimate of the first round is cold (too
/// slow), so a round may fall short and another follows; at most kMaxWarmupRounds rounds.

#include <cstdint>
#include <functional>
#include <string_view>

#include "ibscope/bootstrap/bootstrap.hpp"

namespace ibscope::measure {

/// Rounds of agreement at most, after the first round of calls.
inline constexpr int kMaxWarmupRounds = 6;
/// Warm-up calls at most, whatever the floor asks.
inline constexpr std::int64_t kMaxWarmupCalls = 1'000'000;

/// Pure: the calls rank 0 asks for after `calls` warm-up calls took `elapsed_s` (rank 0's
/// clock) in `round` rounds so far, to reach `min_s` seconds; 0 when the floor is reached, the
/// rounds are spent or the cap kMaxWarmupCalls is reached. At least 1 when it asks for any.
std::int64_t more_warmup_calls(double min_s, std::int64_t calls, double elapsed_s, int round);

/// The time floor of one measurement's warm-up, on every rank: run_calls(n) makes n calls, in
/// rounds that rank 0 decides and broadcasts (more_warmup_calls). The first round makes
/// `first_round` calls (at least 1). min_s <= 0: nothing happens (no bootstrap round). Returns
/// the calls made. Collective over the bootstrap; throws what its broadcast throws.
std::int64_t warm_up_for(bootstrap::Bootstrap& bootstrap, double min_s, std::int64_t first_round,
                         const std::function<void(std::int64_t)>& run_calls, std::string_view what);

}  // namespace ibscope::measure
