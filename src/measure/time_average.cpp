#include "ibscope/measure/time_average.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "ibscope/core/error.hpp"

namespace ibscope::measure {

std::string_view name_of(TimeAverage a) noexcept {
  switch (a) {
    case TimeAverage::kRank0:
      return "rank0";
    case TimeAverage::kMean:
      return "avg";
    case TimeAverage::kMin:
      return "min";
    case TimeAverage::kMax:
      return "max";
  }
  return "avg";
}

TimeAverage parse_time_average(std::string_view text, std::string_view flag) {
  for (auto a : {TimeAverage::kRank0, TimeAverage::kMean, TimeAverage::kMin, TimeAverage::kMax}) {
    if (text == name_of(a) || text == std::to_string(static_cast<int>(a))) return a;
  }
  throw UsageError(fmt::format(
      "{} '{}': expected 0 (rank0), 1 (avg), 2 (min) or 3 (max), as nccl-tests' -a", flag, text));
}

double combine_loop_times(std::span<const double> loop_s, TimeAverage a) {
  if (loop_s.empty()) throw std::invalid_argument("combine_loop_times: no ranks");
  switch (a) {
    case TimeAverage::kRank0:
      return loop_s.front();
    case TimeAverage::kMin:
      return *std::min_element(loop_s.begin(), loop_s.end());
    case TimeAverage::kMax:
      return *std::max_element(loop_s.begin(), loop_s.end());
    case TimeAverage::kMean:
      break;
  }
  return std::accumulate(loop_s.begin(), loop_s.end(), 0.0) / static_cast<double>(loop_s.size());
}

int slowest_rank(std::span<const double> loop_s) noexcept {
  if (loop_s.empty()) return 0;
  return static_cast<int>(std::max_element(loop_s.begin(), loop_s.end()) - loop_s.begin());
}

int waited_for_rank(std::span<const double> loop_s, std::span<const double> outside_s) noexcept {
  if (outside_s.size() != loop_s.size() ||
      std::all_of(outside_s.begin(), outside_s.end(), [](double x) { return x <= 0; })) {
    return slowest_rank(loop_s);
  }
  return static_cast<int>(std::max_element(outside_s.begin(), outside_s.end()) - outside_s.begin());
}

}  // namespace ibscope::measure
