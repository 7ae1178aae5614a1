#include "ibscope/results/rank_samples.hpp"

#include <algorithm>
#include <cmath>

namespace ibscope::results {
namespace {

// Nearest-rank percentile of sorted values; q in [0, 1].
template <typename T>
T nearest_rank(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return T{};
  const auto n = sorted.size();
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  k = std::clamp<std::size_t>(k, 1, n);
  return sorted[k - 1];
}

}  // namespace

std::vector<ArrivalSummary> summarise_arrivals(const std::vector<std::vector<double>>& arrival_us) {
  std::vector<ArrivalSummary> out;
  out.reserve(arrival_us.size());
  std::vector<double> sorted;
  for (const auto& per_rank : arrival_us) {
    ArrivalSummary s;
    sorted.clear();
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      const double us = per_rank[r];
      if (!std::isfinite(us)) continue;
      sorted.push_back(us);
      if (s.last_rank < 0 || us > s.max_us) {
        s.max_us = us;
        s.last_rank = static_cast<int>(r);
      }
    }
    std::sort(sorted.begin(), sorted.end());
    s.ranks = static_cast<int>(sorted.size());
    s.p50_us = nearest_rank(sorted, 0.5);
    s.p99_us = nearest_rank(sorted, 0.99);
    out.push_back(s);
  }
  return out;
}

RssSummary summarise_rss(const std::vector<std::uint64_t>& rss_bytes) {
  RssSummary s;
  s.ranks = static_cast<int>(rss_bytes.size());
  if (rss_bytes.empty()) return s;
  const auto max_it = std::max_element(rss_bytes.begin(), rss_bytes.end());
  s.max_rank = static_cast<int>(max_it - rss_bytes.begin());
  std::vector<std::uint64_t> sorted = rss_bytes;
  std::sort(sorted.begin(), sorted.end());
  s.min_bytes = sorted.front();
  s.max_bytes = sorted.back();
  s.p50_bytes = nearest_rank(sorted, 0.5);
  return s;
}

}  // namespace ibscope::results
