#include "ibscope/measure/stall.hpp"

#include <algorithm>

namespace ibscope::measure {

std::vector<Stall> find_stalls(const std::vector<double>& samples_us, const StallCriteria& c) {
  std::vector<Stall> out;
  if (samples_us.empty()) return out;
  std::vector<double> sorted = samples_us;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const double bound = std::max(c.stall_factor * median, median + c.min_stall_us);
  for (std::size_t i = 0; i < samples_us.size(); ++i) {
    if (samples_us[i] > bound) out.push_back({static_cast<int>(i), samples_us[i], median});
  }
  return out;
}

}  // namespace ibscope::measure
