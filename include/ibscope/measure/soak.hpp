#pragma once
/// The arithmetic of a soak (pure, no I/O): a long run of verified collectives cut into windows
/// of wall time. Per window and case (algorithm, type, op, size): iterations, time statistics,
/// bandwidth, #wrong; per window: every rank's resident memory (VmRSS). At the end: drift of
/// the last window against the first steady one (window 0 is warm-up), a linear trend per hour,
/// RSS growth per rank, and the verdict.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ibscope/fabric/counters.hpp"
#include "ibscope/measure/stats.hpp"

namespace ibscope::measure {

/// One case (algorithm, type, op, size) measured during one window.
struct SoakCaseWindow {
  std::string algorithm, type, op;
  std::uint64_t size_bytes = 0;
  std::uint64_t iterations = 0;
  Stats time_us;            ///< per iteration, max over ranks
  double algbw_gbps = 0;    ///< size / mean time (GB/s = 1e9 B/s), as the sweep rows
  double busbw_gbps = 0;    ///< algbw x the collective's busbw factor
  std::uint64_t wrong = 0;  ///< wrong elements over every iteration and rank of the window
};

struct SoakWindow {
  int index = 0;
  double start_s = 0, end_s = 0;  ///< since the soak started, on rank 0's clock
  std::vector<SoakCaseWindow> cases;
  std::vector<std::uint64_t> rss_bytes;  ///< per rank, at the end of the window
  /// Every host NIC's counter growth over the window (fabric/counters.hpp); on rank 0 only,
  /// empty elsewhere and with --no-nic-counters.
  std::vector<fabric::NicDelta> nic_counters;
};

/// Per-iteration times of one case in one window, in constant memory however long the window
/// is (a soak that kept every sample would grow its own RSS): exact count, min, max, mean and
/// sd; percentiles from log-spaced bins, 200 per decade from 0.01 µs to 1e9 µs, so within
/// 0.6 % of the exact order statistic (clamped to [min, max]).
class TimeHistogram {
 public:
  TimeHistogram();
  void add(double us) noexcept;
  /// Back to empty, keeping its memory.
  void clear() noexcept;
  std::uint64_t count() const noexcept { return n_; }
  /// As summarize() would give for the samples, but percentiles from the bins.
  Stats stats() const;

 private:
  std::size_t bin_of(double us) const noexcept;
  double bin_value(std::size_t bin) const noexcept;
  double percentile(double q) const noexcept;

  std::vector<std::uint64_t> bins_;
  std::uint64_t n_ = 0;
  double min_ = 0, max_ = 0, sum_ = 0, sum_sq_ = 0;
};

/// Builds a case's window figures from its times (µs, max over ranks) and its #wrong.
SoakCaseWindow make_case_window(std::string algorithm, std::string type, std::string op,
                                std::uint64_t size_bytes, const TimeHistogram& times_us,
                                double busbw_factor, std::uint64_t wrong);

struct SoakThresholds {
  /// Largest RSS growth any rank may show from the end of window 0 to the end of the last.
  std::uint64_t max_rss_growth_bytes = 8ULL << 20;
  /// Largest allowed drift as a fraction (0.2 = 20 %): a case fails when its last window's p50
  /// exceeds (1 + d) x the first steady window's, or its busbw falls below 1 / (1 + d) of it.
  /// 0: drift is reported, never judged.
  double max_drift = 0;
};

/// Drift of one case: the last window against the first steady window (window 1; window 0
/// when there is only one).
struct SoakCaseDrift {
  std::string algorithm, type, op;
  std::uint64_t size_bytes = 0;
  int first_window = 0, last_window = 0;
  double first_p50_us = 0, last_p50_us = 0, p50_ratio = 1;
  double first_busbw_gbps = 0, last_busbw_gbps = 0, busbw_ratio = 1;
  /// Least-squares slope over the steady windows (window midpoints in hours), relative to the
  /// first steady value: 0.05 = +5 % per hour. 0 with fewer than two steady windows.
  double p50_trend_per_hour = 0, busbw_trend_per_hour = 0;
};

struct SoakSummary {
  int windows = 0;
  int steady_windows = 0;  ///< windows after the warm-up window 0
  std::vector<SoakCaseDrift> cases;
  /// Per rank: RSS at the end of the last window minus at the end of window 0 (bytes; may be
  /// negative). Empty with fewer than two windows (nothing to compare).
  std::vector<std::int64_t> rss_growth_bytes;
  std::uint64_t wrong = 0;  ///< over every window
  bool pass = true;
  std::vector<std::string> reasons;  ///< why it failed, one line each; empty on PASS
};

/// Summarises the windows (in order) against the thresholds. Every window must list the same
/// cases in the same order and the same number of ranks.
SoakSummary summarize_soak(std::span<const SoakWindow> windows, const SoakThresholds& t);

/// Least-squares slope of y over x; 0 with fewer than two points or no spread in x.
double least_squares_slope(std::span<const double> x, std::span<const double> y) noexcept;

/// The default report interval for a soak of `duration_s`: 30 s, or duration/20 when that is
/// longer, but at most duration/2 so that there are a warm-up and a steady window.
double default_soak_window_s(double duration_s) noexcept;

/// Throws UsageError when the window does not fit twice into the duration (window 0 is warm-up,
/// so a soak needs at least one more to compare against).
void check_soak_times(double duration_s, double window_s);

}  // namespace ibscope::measure
