#pragma once
/// Acceptance verdicts from all-pairs bandwidth (pure; unit-tested). Each link gets two tests:
///   absolute: measured >= min_fraction x expected (expected from the line rate and the link
///             type's overheads, accept/expected_rate.hpp, or --expect-gbps);
///   latency:  when measured, not above max_latency_ratio x the links' median latency;
///   relative: not a low outlier among all links: measured >= median - k x 1.4826 x MAD, with
///             the MAD floored at mad_floor_fraction x median so that a very uniform fabric
///             does not flag links that differ by noise.
/// A host whose every link failed (with at least two links) is named as the culprit, and the
/// failures of its partners on links to it are attributed to it: one slow host is reported as
/// one slow host, not as every host it talked to.

#include <optional>
#include <string>
#include <vector>

#include "ibscope/accept/counter_verdict.hpp"
#include "ibscope/accept/history.hpp"

namespace ibscope::accept {

struct LinkMeasurement {
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b;
  double measured_gbps = 0;  ///< GB/s, best of the attempts
  double expected_gbps = 0;  ///< GB/s; 0: unknown (absolute test skipped)
  double latency_us = 0;     ///< half round trip, best of the attempts; 0: not measured
  int attempts = 1;          ///< how many times the link was measured
  /// What its NICs' counters said over its rows (accept/counter_verdict.hpp); empty when not
  /// read. Errors or a flap fail the link whatever its bandwidth; a link failed by bandwidth
  /// gets the counters' summary in its reason (do they explain it?).
  std::optional<CounterFindings> counters;
  /// What its past says (accept --baseline, accept/history.hpp); empty without one. A link
  /// more than the threshold below its baseline and outside its noise band fails.
  std::optional<HistoryFinding> history;
};

struct Thresholds {
  double min_fraction = 0.9;
  double mad_k = 3.0;
  double mad_floor_fraction = 0.02;
  double max_latency_ratio = 3.0;  ///< 0: latency not judged
};

struct LinkVerdict {
  LinkMeasurement link;
  double fraction_of_expected = 0;  ///< 0 when expected is unknown
  double peers_median_gbps = 0;
  bool below_expected = false;
  bool outlier = false;
  bool slow_latency = false;
  bool pass = true;
  std::string reason;  ///< empty when it passes
};

struct HostVerdict {
  std::string host;
  int links = 0;
  int failed_links = 0;
  bool culprit = false;  ///< every link of this host failed
  bool pass = true;
  std::string reason;
};

struct AcceptReport {
  std::vector<LinkVerdict> links;
  std::vector<HostVerdict> hosts;  ///< sorted by name
  double median_gbps = 0;
  double mad_gbps = 0;
  double median_latency_us = 0;
  bool pass = true;
};

/// The fabric's figures the relative tests compare against.
struct FabricReference {
  double median_gbps = 0, mad_gbps = 0, median_latency_us = 0;
};

/// Links between ranks of the same host are judged like the others. `reference`: compare against
/// these figures instead of the links' own; after retests, the first measurement's, so that a
/// retest (best of the attempts, only for the failed links) does not move the cut and fail a
/// link that was never retested.
AcceptReport judge_links(const std::vector<LinkMeasurement>& links, const Thresholds& thresholds,
                         const FabricReference* reference = nullptr);

/// The report's median, MAD and median latency.
FabricReference reference_of(const AcceptReport& report) noexcept;

/// The pairs to measure again before a verdict (failed by either test).
std::vector<std::pair<int, int>> suspects(const AcceptReport& report);

/// Keeps, for every pair in `retest`, the better of the two measurements (higher bandwidth,
/// lower latency) and counts the attempt: a link fails only when it is slow every time.
void merge_retest(std::vector<LinkMeasurement>& links, const std::vector<LinkMeasurement>& retest);

/// The relative test's cut: a link below median - k x max(1.4826 x MAD, floor x median) is an
/// outlier (judge_links; also the simulation's).
double outlier_below_gbps(double median_gbps, double mad_gbps, const Thresholds& thresholds);

/// Median and median absolute deviation (pure; empty input gives zeros).
double median_of(std::vector<double> values);
double mad_of(const std::vector<double>& values, double median);

}  // namespace ibscope::accept
