#pragma once
/// The one measurement method: warm-up iterations, then timed iterations on steady_clock with
/// every sample kept; a collective's time per iteration is the maximum over ranks.

#include <span>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/clock.hpp"

namespace ibscope {

/// Runs fn() `warmup` times untimed, then `iters` times timed; returns seconds per iteration.
template <typename Fn>
std::vector<double> time_iterations(int warmup, int iters, Fn&& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    fn();
    samples.push_back(seconds_between(t0, Clock::now()));
  }
  return samples;
}

/// Element-wise maximum of every rank's samples (all ranks must pass the same count).
/// Collective over the bootstrap; throws RemoteError if ranks disagree on the count.
std::vector<double> max_over_ranks(Bootstrap& bootstrap, std::span<const double> samples,
                                   std::string_view what);

/// Every rank's `mine` (any length), indexed by rank. Collective over the bootstrap.
std::vector<std::vector<double>> allgather_doubles(Bootstrap& bootstrap,
                                                   std::span<const double> mine,
                                                   std::string_view what);

/// Sum of one counter over all ranks (e.g. #wrong). Collective over the bootstrap.
std::uint64_t sum_over_ranks(Bootstrap& bootstrap, std::uint64_t value, std::string_view what);

}  // namespace ibscope
