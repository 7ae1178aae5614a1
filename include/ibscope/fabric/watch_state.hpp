#pragma once
/// What `ibscope watch` has seen of one node since it started: each reading's growth and
/// findings (fabric/watch.hpp), the rail window, per-NIC totals for the closing summary, and
/// every counter's growth since the start (the Prometheus counters). Pure: readings in, records
/// out; the sampler owns the clock and the files.

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ibscope/fabric/counters.hpp"
#include "ibscope/fabric/watch.hpp"

namespace ibscope::fabric {

/// One interval: between the previous reading and this one.
struct WatchInterval {
  double interval_s = 0;
  std::vector<NicDelta> deltas;        ///< counter_deltas' order
  std::vector<NicRates> rates;         ///< one per delta, same order
  std::vector<WatchFinding> findings;  ///< every finding of this interval
  std::vector<WatchFinding>
      new_findings;  ///< those not raised (same kind and NIC) the interval before
};

/// One NIC since the watch started.
struct NicTotals {
  std::string nic, driver;
  double seconds = 0;  ///< time it was present (sum of its intervals)
  std::uint64_t traffic_bytes = 0;
  double peak_bytes_per_s = 0;  ///< the busiest interval
  std::uint64_t errors = 0, congestion = 0, flaps = 0;
  int intervals = 0;
  int congested_intervals = 0;   ///< intervals in which a congestion counter grew
  int imbalanced_intervals = 0;  ///< intervals in which it was found a lagging rail
  bool vanished = false;         ///< absent from the latest reading
  /// Error and flap counters that grew, "symbol_error" -> growth since the start.
  std::map<std::string, std::uint64_t> errors_by_counter, flaps_by_counter;
  /// Error counters seen at their saturating maximum (their growth is unknown).
  std::set<std::string> saturated_errors;

  double average_bytes_per_s() const noexcept {
    return seconds > 0 ? static_cast<double>(traffic_bytes) / seconds : 0.0;
  }
  /// Share of its intervals with congestion growth (0..1).
  double congested_share() const noexcept {
    return intervals > 0 ? static_cast<double>(congested_intervals) / intervals : 0.0;
  }
};

/// One counter's growth since the watch started (wraps and resets handled by counter_deltas).
struct CounterTotal {
  std::string nic;
  CounterSource source = CounterSource::kHw;
  std::string name;
  CounterKind kind = CounterKind::kOther;
  std::uint64_t total = 0;
};

class WatchState {
 public:
  /// `first`: the reading the watch starts from (every counter in it starts at 0 growth).
  WatchState(WatchThresholds thresholds, const CounterSnapshot& first);

  /// The next reading (a later time_s than the previous one): its interval's record.
  WatchInterval add(const CounterSnapshot& next);

  /// Per NIC, in order of first appearance.
  const std::vector<NicTotals>& totals() const noexcept { return totals_; }
  /// Every counter of every NIC seen, in order of first appearance.
  const std::vector<CounterTotal>& counter_totals() const noexcept { return counters_; }
  /// Rail imbalance over the whole watch (each NIC's average rate), for the summary.
  std::vector<WatchFinding> whole_run_imbalance() const;
  const WatchThresholds& thresholds() const noexcept { return thresholds_; }
  /// Seconds covered by the readings so far.
  double elapsed_s() const noexcept { return last_.time_s - start_s_; }

 private:
  NicTotals& totals_of(const std::string& nic, const std::string& driver);
  void count_counters(const CounterSnapshot& snapshot);
  void add_growth(const NicDelta& d);
  std::vector<WatchFinding> window_imbalance();
  bool compared(const std::string& nic, const std::string& driver, double bytes_per_s) const;

  WatchThresholds thresholds_;
  CounterSnapshot last_;
  double start_s_ = 0;
  std::vector<NicTotals> totals_;
  std::vector<CounterTotal> counters_;
  std::map<std::tuple<std::string, CounterSource, std::string>, std::size_t> counter_index_;
  /// The rail window: the latest intervals (seconds, bytes per NIC), at least the window long.
  std::deque<std::pair<double, std::map<std::string, std::uint64_t>>> window_;
  std::set<std::string> active_interfaces_;  ///< interfaces that once moved the minimum rate
  std::set<std::pair<WatchFindingKind, std::string>> previous_;
};

}  // namespace ibscope::fabric
