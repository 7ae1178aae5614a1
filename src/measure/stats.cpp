#include "ibscope/measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ibscope::measure {

double percentile_sorted(std::span<const double> sorted, double q) noexcept {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Stats summarize(std::span<const double> samples) {
  Stats s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = percentile_sorted(sorted, 50);
  s.p99 = percentile_sorted(sorted, 99);
  s.p99_9 = percentile_sorted(sorted, 99.9);
  // Welford: stable for long runs of nearly equal samples.
  double mean = 0, m2 = 0;
  std::size_t k = 0;
  for (double x : samples) {
    ++k;
    const double d = x - mean;
    mean += d / static_cast<double>(k);
    m2 += d * (x - mean);
  }
  s.mean = mean;
  s.sd = k > 1 ? std::sqrt(m2 / static_cast<double>(k - 1)) : 0.0;
  return s;
}

}  // namespace ibscope::measure
