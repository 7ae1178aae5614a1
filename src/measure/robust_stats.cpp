#include "ibscope/measure/robust_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ibscope/measure/stats.hpp"

namespace ibscope::measure {

RobustStats robust_stats(std::span<const double> values) {
  RobustStats s;
  s.n = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile_sorted(sorted, 50);
  s.p25 = percentile_sorted(sorted, 25);
  s.p75 = percentile_sorted(sorted, 75);
  std::vector<double> deviation;
  deviation.reserve(sorted.size());
  for (const double x : sorted) deviation.push_back(std::fabs(x - s.median));
  std::sort(deviation.begin(), deviation.end());
  s.mad = percentile_sorted(deviation, 50);
  s.spread = kMadToSigma * s.mad;
  return s;
}

}  // namespace ibscope::measure
