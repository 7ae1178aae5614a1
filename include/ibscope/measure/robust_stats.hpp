#pragma once
/// Robust statistics of a few repeated measurements of one figure (pure; unit-tested): what a
/// baseline keeps per link and per collective row (docs/baselines.md). The median and the
/// median absolute deviation (MAD) ignore one wild run out of five, where a mean and a standard
/// deviation would follow it. Percentiles interpolate between order statistics as stats.hpp's do.

#include <cstddef>
#include <span>

namespace ibscope::measure {

struct RobustStats {
  std::size_t n = 0;
  double median = 0;
  double mad = 0;           ///< median of |x - median|, in the figure's unit
  double spread = 0;        ///< kMadToSigma x MAD: the noise a normal sample of this MAD would have
  double p25 = 0, p75 = 0;  ///< quartiles (the IQR is p75 - p25)
  double min = 0, max = 0;

  /// spread as a percentage of the median (0 when the median is 0).
  double spread_pct() const noexcept { return median != 0 ? 100.0 * spread / median : 0.0; }
};

/// Empty input gives all zeros with n == 0. Never throws.
RobustStats robust_stats(std::span<const double> values);

}  // namespace ibscope::measure
