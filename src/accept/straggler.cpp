#include "ibscope/accept/straggler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ibscope/accept/link_verdict.hpp"

namespace ibscope::accept {

StragglerReport find_straggler(const std::vector<ArrivalRow>& rows,
                               const std::vector<measure::ClockOffset>& offsets,
                               const std::vector<std::string>& hosts,
                               const StragglerThresholds& t) {
  StragglerReport report;
  const std::size_t n = hosts.size();
  for (const auto& o : offsets) {
    if (std::isfinite(o.uncertainty_s)) {
      report.clock_uncertainty_us = std::max(report.clock_uncertainty_us, o.uncertainty_s * 1e6);
    }
  }
  std::vector<std::vector<double>> late_us(n), late_fraction(n);
  std::vector<int> last(n, 0), iterations(n, 0);
  for (const ArrivalRow& row : rows) {
    std::vector<std::vector<double>> row_late;
    if (row.enter_s.size() != n || n < 2 || offsets.size() != n) {
      report.lateness_us.push_back(std::move(row_late));
      continue;
    }
    const std::size_t iters = row.enter_s[0].size();
    const bool consistent = std::all_of(row.enter_s.begin(), row.enter_s.end(),
                                        [&](const auto& v) { return v.size() == iters; });
    if (!consistent || iters == 0) {
      report.lateness_us.push_back(std::move(row_late));
      continue;
    }
    const double median_iteration_us = median_of(row.iteration_us);
    for (std::size_t i = 0; i < iters; ++i) {
      std::vector<double> arrival_s(n);
      for (std::size_t r = 0; r < n; ++r) arrival_s[r] = row.enter_s[r][i] - offsets[r].offset_s;
      const double first = *std::min_element(arrival_s.begin(), arrival_s.end());
      const auto last_rank = static_cast<std::size_t>(
          std::max_element(arrival_s.begin(), arrival_s.end()) - arrival_s.begin());
      std::vector<double> lateness(n);
      for (std::size_t r = 0; r < n; ++r) {
        lateness[r] = (arrival_s[r] - first) * 1e6;
        late_us[r].push_back(lateness[r]);
        late_fraction[r].push_back(median_iteration_us > 0 ? lateness[r] / median_iteration_us : 0);
        ++iterations[r];
      }
      ++last[last_rank];
      row_late.push_back(std::move(lateness));
    }
    report.lateness_us.push_back(std::move(row_late));
  }

  for (std::size_t r = 0; r < n; ++r) {
    RankArrival a;
    a.rank = static_cast<int>(r);
    a.host = hosts[r];
    a.iterations = iterations[r];
    a.last_count = last[r];
    a.last_fraction = iterations[r] > 0 ? static_cast<double>(last[r]) / iterations[r] : 0;
    a.median_late_us = median_of(late_us[r]);
    a.median_late_fraction = median_of(late_fraction[r]);
    report.ranks.push_back(std::move(a));
  }
  // The most often last rank, if it is last consistently and by enough.
  const auto worst = std::max_element(
      report.ranks.begin(), report.ranks.end(),
      [](const RankArrival& x, const RankArrival& y) { return x.last_count < y.last_count; });
  if (worst != report.ranks.end() && worst->iterations > 0) {
    const double min_late_us = std::max(t.min_late_us, 2 * report.clock_uncertainty_us);
    if (worst->last_fraction >= t.min_last_fraction &&
        worst->median_late_fraction >= t.min_late_fraction &&
        worst->median_late_us >= min_late_us) {
      report.straggler = worst->rank;
      report.reason = fmt::format(
          "rank {} ({}) arrived last in {} of {} iterations, {:.0f} us after the first rank "
          "(median; {:.0f} % of an iteration): the others wait for it",
          worst->rank, worst->host, worst->last_count, worst->iterations, worst->median_late_us,
          100 * worst->median_late_fraction);
    }
  }
  return report;
}

}  // namespace ibscope::accept
