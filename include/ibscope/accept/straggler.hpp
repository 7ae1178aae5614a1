#pragma once
/// Straggler attribution in collectives (pure; unit-tested). Every rank records when it entered
/// each timed iteration; with the clock offsets to rank 0 (measure/clock_sync.hpp) these become
/// arrival times on one axis. Per iteration, a rank's lateness is its arrival minus the earliest
/// arrival. A rank that is the last to arrive in most iterations, and late by a good part of an
/// iteration, is the straggler: everybody else waits for it, every step.

#include <optional>
#include <string>
#include <vector>

#include "ibscope/measure/clock_sync.hpp"

namespace ibscope::accept {

/// One measured row: [rank][iteration] entry times on each rank's own clock (seconds), and the
/// iteration times of the same iterations (microseconds; the calls of the rank the others waited
/// for, CollectiveRow::samples_us).
struct ArrivalRow {
  std::string label;  ///< "ring 4 MiB out-of-place"
  std::vector<std::vector<double>> enter_s;
  std::vector<double> iteration_us;
};

struct StragglerThresholds {
  double min_last_fraction = 0.75;  ///< last to arrive in at least this share of iterations
  double min_late_fraction = 0.25;  ///< median lateness >= this share of the median iteration
  double min_late_us = 50;          ///< ... and at least this (above clock uncertainty)
};

struct RankArrival {
  int rank = 0;
  std::string host;
  int iterations = 0;
  int last_count = 0;  ///< iterations in which this rank arrived last
  double last_fraction = 0;
  double median_late_us = 0;        ///< over all iterations of all rows
  double median_late_fraction = 0;  ///< lateness / that row's median iteration, median over all
};

struct StragglerReport {
  std::vector<RankArrival> ranks;
  /// Per row, [iteration][rank] lateness in microseconds (rank 0's time axis).
  std::vector<std::vector<std::vector<double>>> lateness_us;
  double clock_uncertainty_us = 0;  ///< the worst offset uncertainty
  std::optional<int> straggler;     ///< the rank, when one is consistently last
  std::string reason;               ///< evidence for the straggler ("" when none)
};

/// `offsets` from measure_clock_offsets (one per rank), `hosts` per rank. Rows whose enter_s
/// does not have one entry per rank, or whose ranks disagree on the iteration count, are skipped.
StragglerReport find_straggler(const std::vector<ArrivalRow>& rows,
                               const std::vector<measure::ClockOffset>& offsets,
                               const std::vector<std::string>& hosts,
                               const StragglerThresholds& thresholds = {});

}  // namespace ibscope::accept
