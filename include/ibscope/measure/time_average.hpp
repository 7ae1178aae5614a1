#pragma once
/// A collective's time per call, as nccl-tests defines it, and the per-iteration distribution
/// beside it (docs/methodology.md, "Time per call"). Pure; unit-tested on synthetic timelines.
///
/// Every rank times its whole loop of n timed calls (one steady_clock interval from before the
/// first call to after the last) and divides by n: its loop time. The ranks' loop times are
/// combined as nccl-tests' `-a` says: 0 rank 0's, 1 their average (the default), 2 the minimum,
/// 3 the maximum. algbw and busbw follow from that time.
///
/// Each rank also times every call on its own clock. Samples of different ranks cover different
/// wall-clock windows (the ranks run back to back after one barrier), so they are never mixed:
/// the distribution reported is that of one rank, named: the one the others waited for
/// (waited_for_rank).

#include <span>
#include <string>
#include <string_view>

namespace ibscope::measure {

/// nccl-tests' `-a`: how the ranks' loop times combine into the reported time.
enum class TimeAverage { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

/// "rank0", "avg", "min", "max" (the results file's params.average).
std::string_view name_of(TimeAverage a) noexcept;
/// "0".."3" as nccl-tests spells them, or the names above. Throws UsageError naming `flag`.
TimeAverage parse_time_average(std::string_view text, std::string_view flag);

/// The reported time from every rank's loop time (seconds per call), indexed by rank.
/// Throws std::invalid_argument on an empty span.
double combine_loop_times(std::span<const double> loop_s, TimeAverage a);

/// The rank whose loop time is the largest (the lowest index on a tie); 0 for an empty span.
int slowest_rank(std::span<const double> loop_s) noexcept;

/// The rank the others waited for, from every rank's loop time and the time it spent between
/// its calls (both seconds per call, indexed by rank): every call waits for its last arrival,
/// so that is the rank with the most time outside its calls, which the others spent waiting
/// inside theirs (their loop times are all alike). Where no rank spent any time outside its
/// calls (a back-to-back loop: all outside_s 0), the rank whose loop took longest, the last to
/// finish. The lowest index on a tie; 0 for empty spans. Spans of different sizes: loop_s
/// alone decides.
int waited_for_rank(std::span<const double> loop_s, std::span<const double> outside_s) noexcept;

}  // namespace ibscope::measure
