#pragma once
/// The one measurement method: warm-up iterations, then timed iterations on steady_clock with
/// every sample kept; a collective's time per call is nccl-tests' (time_average.hpp).

#include <span>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/measure/time_average.hpp"

namespace ibscope::measure {

/// One rank's timed loop: the whole loop's time divided by its calls (nccl-tests' time), every
/// call's own time (from the end of the previous call), and the part of the loop spent between
/// calls, per call. Seconds.
struct LoopTiming {
  double loop_s = 0;
  std::vector<double> samples_s;
  double outside_s = 0;  ///< per call, before the call began (time_loop_split); 0 otherwise
};

/// Runs fn() `warmup` times untimed, then `iters` times timed: one interval around the whole
/// loop (divided by iters) and one around each call. One clock read per call.
template <typename Fn>
LoopTiming time_loop(int warmup, int iters, Fn&& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  LoopTiming t;
  t.samples_s.reserve(static_cast<std::size_t>(iters));
  const auto start = Clock::now();
  auto t0 = start;
  for (int i = 0; i < iters; ++i) {
    fn();
    const auto t1 = Clock::now();
    t.samples_s.push_back(seconds_between(t0, t1));
    t0 = t1;
  }
  t.loop_s = iters > 0 ? seconds_between(start, t0) / iters : 0;
  return t;
}

/// time_loop for a loop that does work of its own between calls: before() (a delay, a compute
/// step), then call(arrival), the time point at which this rank arrived at the call. Samples
/// and loop_s are as time_loop's (before() included); outside_s is the time before() took, per
/// call: a rank that arrives late makes every other rank wait inside its call, so the rank
/// with the most time outside its calls is the one the others waited for (waited_for_rank).
/// Two clock reads per call.
template <typename Before, typename Call>
LoopTiming time_loop_split(int warmup, int iters, Before&& before, Call&& call) {
  for (int i = 0; i < warmup; ++i) {
    before();
    call(Clock::now());
  }
  LoopTiming t;
  t.samples_s.reserve(static_cast<std::size_t>(iters));
  const auto start = Clock::now();
  auto t0 = start;
  double outside_s = 0;
  for (int i = 0; i < iters; ++i) {
    before();
    const auto arrival = Clock::now();
    call(arrival);
    const auto t1 = Clock::now();
    t.samples_s.push_back(seconds_between(t0, t1));
    outside_s += seconds_between(t0, arrival);
    t0 = t1;
  }
  t.loop_s = iters > 0 ? seconds_between(start, t0) / iters : 0;
  t.outside_s = iters > 0 ? outside_s / iters : 0;
  return t;
}

/// A timed loop of every rank, combined (time_average.hpp): the reported time per call, and the
/// per-call samples of the rank the others waited for (waited_for_rank), named.
struct RowTiming {
  double time_s = 0;
  int iteration_rank = 0;
  std::vector<double> samples_s;
};

/// Combines every rank's loop as `average` says. Collective over the bootstrap: rank 0 gathers
/// two doubles per rank (loop and outside time) and broadcasts the time and the named rank; the
/// named rank's samples go to rank 0 only (samples_s is empty elsewhere). O(n) bytes at the root.
RowTiming combine_over_ranks(bootstrap::Bootstrap& bootstrap, const LoopTiming& mine,
                             TimeAverage average, std::string_view what);

/// Every rank's `mine` (any length), indexed by rank, on rank 0; empty elsewhere. Collective.
std::vector<std::vector<double>> gather_doubles(bootstrap::Bootstrap& bootstrap,
                                                std::span<const double> mine,
                                                std::string_view what);

/// Sum of one counter over all ranks (e.g. #wrong), on every rank. Collective over the
/// bootstrap (a gather and a broadcast).
std::uint64_t sum_over_ranks(bootstrap::Bootstrap& bootstrap, std::uint64_t value,
                             std::string_view what);

}  // namespace ibscope::measure
