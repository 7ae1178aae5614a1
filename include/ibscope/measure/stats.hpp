#pragma once
/// Statistics of a sample set (pure). Percentiles interpolate linearly between order
/// statistics (the "type 7" definition used by numpy and R). sd is the sample standard
/// deviation (n - 1); 0 for a single sample.

#include <cstddef>
#include <span>

namespace ibscope::measure {

struct Stats {
  std::size_t n = 0;
  double min = 0, p50 = 0, p99 = 0, p99_9 = 0, max = 0, mean = 0, sd = 0;
};

/// Empty input gives all zeros with n == 0.
Stats summarize(std::span<const double> samples);
/// Percentile q in [0, 100] of already sorted samples.
double percentile_sorted(std::span<const double> sorted, double q) noexcept;

/// Scales a median absolute deviation to the standard deviation it estimates for normally
/// distributed samples (1 / Phi^-1(3/4)); robust fits use MAD x this as their noise scale.
inline constexpr double kMadToSigma = 1.4826;

}  // namespace ibscope::measure
