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
/// Every rank must make the same number of calls, so rank 0 decides: a first round of one call
/// measures roughly what a call costs, then each round makes the calls that should fill the
/// floor at the last round's rate, and rank 0 tells every rank over the bootstrap how many more
/// to make (0: warm). The floor is reached by a round after the first that lasted at least
/// min_s on its own: the first calls are cold, and 5 slow ones could fill 2 ms with the FIFO
/// still untouched (seen in 3 of 10 first rows here before this rule). At most
/// kMaxWarmupRounds rounds and kMaxWarmupCalls calls.

#include <cstdint>
#include <functional>
#include <string_view>

#include "ibscope/bootstrap/bootstrap.hpp"

namespace ibscope::measure {

/// The floor of a sweep's first measurement (when a floor is asked for at all): long enough for
/// the scheduler to place the job's freshly started, busy-polling ranks on CPUs of their own.
inline constexpr double kFirstWarmupMinS = 0.05;
/// The share of the floor spent in calls after its last bootstrap round (settle_calls).
inline constexpr double kSettleShare = 0.25;
/// Rounds at most, the first one included.
inline constexpr int kMaxWarmupRounds = 6;
/// Warm-up calls at most, whatever the floor asks.
inline constexpr std::int64_t kMaxWarmupCalls = 1'000'000;

/// One round of warm-up calls as rank 0 saw it.
struct WarmupRound {
  int index = 0;                 ///< 0: the first round
  std::int64_t calls = 0;        ///< calls in this round
  double seconds = 0;            ///< how long they took (rank 0's clock)
  std::int64_t total_calls = 0;  ///< calls in every round so far, this one included
};

/// Pure: the calls rank 0 asks for after round `last`, to make a round of at least `min_s`
/// seconds (10 % more than the last round's rate says); 0 when a round after the first lasted
/// min_s, the rounds are spent or the cap kMaxWarmupCalls is reached. At least 1 otherwise.
std::int64_t more_warmup_calls(double min_s, const WarmupRound& last);

/// Pure: the calls rank 0 asks for once the floor is reached, after its last bootstrap round:
/// the ranks leave a bootstrap round having slept in it, and the first ~30 calls after one ran
/// at twice the rate of the rest here (the 512 KiB of FIFO descriptors cold in cache again), so
/// kSettleShare of the floor is spent in calls before the -w calls. 0 where a call is long.
std::int64_t settle_calls(double min_s, const WarmupRound& last);

/// The time floor of one measurement's warm-up, on every rank: run_calls(n) makes n calls, in
/// rounds that rank 0 decides and broadcasts (more_warmup_calls), the first of one call, then
/// the settle_calls that rank 0 sends with its last decision.
/// min_s <= 0: nothing happens (no bootstrap round). Returns the calls made. Collective over the
/// bootstrap; throws what its broadcast throws.
std::int64_t warm_up_for(bootstrap::Bootstrap& bootstrap, double min_s,
                         const std::function<void(std::int64_t)>& run_calls, std::string_view what);

}  // namespace ibscope::measure
