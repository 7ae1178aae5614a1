#pragma once
/// The "acceptance" section of a results file (`ibscope accept`; results/README.md): the verdict,
/// the thresholds it was judged by, the preflight, every link's evidence, the per-host and
/// per-NIC verdicts, the fabric's medians, and the all-reduce straggler analysis. Rates in GB/s
/// (1e9 B/s) unless the name says Gb/s; a figure that is unknown is NaN (null in the file).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/fabric/counters.hpp"
#include "ibscope/results/accept_pattern.hpp"
#include "ibscope/results/loopback.hpp"
#include "ibscope/results/rank_samples.hpp"

namespace ibscope::results {

/// The transport of accept's all-pairs phase: the one definition for the request (accept
/// --transport) and the record (this section holds the transport used, never kAuto).
enum class AcceptTransport {
  kAuto,  ///< request only: verbs when every host has an ACTIVE RDMA port, else UCX
  kUcx,
  kVerbs,
};

struct AcceptThresholds {
  double min_fraction = 0, mad_k = 0, mad_floor_fraction = 0, max_latency_ratio = 0;
  int retests = 0;
  double straggler_min_last_fraction = 0, straggler_min_late_fraction = 0,
         straggler_min_late_us = 0;
};

/// accept's checks on NIC counters (accept/counter_verdict.hpp, docs/counters.md).
struct AcceptCounterThresholds {
  std::uint64_t max_link_errors = 0;
  double max_retransmit_ppm = 0;
  std::uint64_t min_retransmits = 0;
  double congestion_finding_pct = 0;
};

struct PreflightFinding {
  std::string host, device;
  bool fatal = false;
  std::string message;
};

struct AcceptPreflight {
  bool pass = false;
  bool rdma_everywhere = false;
  std::string no_rdma_reason;
  double fabric_data_rate_gbit = 0;
  std::string link_layer;
  std::uint32_t active_mtu_bytes = 0;
  std::vector<PreflightFinding> findings;
  /// Each NIC's loopback (--no-loopback: absent); its failures are fatal findings too.
  std::optional<Loopback> loopback;
};

/// accept --baseline: one link against its past and its class reference (docs/baselines.md).
struct AcceptLinkBaseline {
  bool known = false;  ///< the baseline holds this link
  double median_gbps = 0, spread_gbps = 0;
  int runs = 0;
  double drop_pct = 0;    ///< below its median, % (negative: faster)
  bool below = false;     ///< failed: beyond the threshold and the noise band
  std::string reference;  ///< the class reference's name ("" none)
  double reference_gbps = 0, reference_drop_pct = 0;
  bool below_reference = false;  ///< more than the threshold below the reference (a warning)
};

/// accept --baseline: what the run was judged against.
struct AcceptBaseline {
  std::string source;  ///< "FILE (measured, 5 runs)"
  double drop_pct = 0, noise_k = 0;
  std::string reference;  ///< the class reference that matched ("" none)
  int links_known = 0, links_below = 0, links_below_reference = 0;
};

/// One link between two hosts: what was measured, what was expected, the tests' outcomes.
struct AcceptLink {
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b, nic_a, nic_b;
  double measured_gbps = 0;  ///< the slower direction, best attempt
  double gbps_a_to_b = 0, gbps_b_to_a = 0;
  double expected_gbps = 0;  ///< 0: unknown
  double line_rate_gbit = 0;
  std::string link_kind;
  double fraction_of_expected = 0, peers_median_gbps = 0;
  double latency_us = 0;  ///< 0: not measured
  double peers_median_latency_us = 0;
  int attempts = 1;
  std::string transports;
  bool below_expected = false, outlier = false, slow_latency = false, pass = false;
  std::string reason;  ///< empty when it passes
  /// The NIC counters' growth on the link's two hosts over its rows; empty when not read.
  std::vector<fabric::NicDelta> nic_counters;
  bool counter_errors = false;                 ///< errors beyond the thresholds: the link failed
  bool flapped = false;                        ///< a flap counter grew: the link failed
  double congestion_pct = 0;                   ///< the largest congestion share over its NICs
  std::string counters;                        ///< what the counters say ("" when not read)
  std::optional<AcceptLinkBaseline> baseline;  ///< accept --baseline only
};

struct AcceptHost {
  std::string host;
  int links = 0, failed_links = 0;
  bool culprit = false, pass = false;
  std::string reason;
};

struct AcceptNic {
  std::string host, nic;
  int links = 0, failed_links = 0;
  bool culprit = false, pass = false;
};

struct AcceptAllreduce {
  std::uint64_t rows = 0, wrong = 0;
};

struct StragglerRank {
  int rank = 0;
  std::string host;
  int iterations = 0, last_count = 0;
  double last_fraction = 0, median_late_us = 0, median_late_fraction = 0;
};

/// One all-reduce row's arrivals: [iteration][rank] lateness in µs on rank 0's time axis.
/// A file of a large job keeps, instead of arrival_us (then empty), one summary over the ranks
/// per iteration (rank_samples.hpp); a file that kept arrival_us has no `arrivals`.
struct StragglerRow {
  std::string algorithm;
  std::uint64_t size_bytes = 0;
  bool in_place = false;
  std::vector<std::vector<double>> arrival_us;
  std::vector<ArrivalSummary> arrivals = {};  ///< read from a file that summarised arrival_us
};

struct NamedStraggler {
  int rank = 0;
  std::string host;
};

struct Stragglers {
  double clock_uncertainty_us = 0;
  std::vector<StragglerRank> ranks;
  std::vector<StragglerRow> rows;
  std::optional<NamedStraggler> straggler;  ///< the rank that was consistently last
  std::string reason;
};

/// `accept --congestion` (accept/congestion.hpp): one victim metric under one congestor.
struct CongestionImpact {
  std::string congestor;  ///< "incast", "alltoall", "broadcast"
  std::string metric;     ///< "latency_p50_us", "latency_p99_us", "busbw_gbps", "tail_busbw_gbps"
  double isolated = 0, congested = 0;
  double impact = 0;  ///< GPCNet's impact factor; NaN (null in JSON) when not measured
  double max_impact = 0;
  bool tail = false, pass = false;
};

/// What one congestor moved while the victims measured.
struct CongestionLoad {
  std::string congestor;
  std::uint64_t rounds = 0;
  double seconds = 0;
  double received_gbps = 0;  ///< every congestor's received bytes / seconds, GB/s (1e9 B/s)
};

struct AcceptCongestion {
  bool pass = false;
  bool by_host = true;            ///< false: split by rank (one host, or --victim-ranks)
  std::vector<int> victim_ranks;  ///< ascending
  std::vector<std::string> victim_hosts;
  int congestor_ranks = 0, congestor_hosts = 0;
  int victim_pairs = 0;
  std::uint64_t latency_bytes = 0, allreduce_bytes = 0, congestor_bytes = 0;
  int latency_iters = 0, allreduce_iters = 0;
  double max_impact = 0, max_tail_impact = 0;
  std::vector<CongestionImpact> impacts;  ///< four per congestor, in the order run
  std::vector<CongestionLoad> loads;      ///< one per congestor
};

struct Acceptance {
  bool pass = false;
  AcceptTransport transport = AcceptTransport::kUcx;
  std::optional<AcceptThresholds> thresholds;
  double expect_line_gbit = 0;  ///< --expect-gbps as a line rate; 0: from the ports
  std::optional<AcceptPreflight> preflight;
  std::vector<AcceptLink> links;
  std::vector<AcceptHost> hosts;
  std::vector<AcceptNic> nics;
  double median_gbps = 0, mad_gbps = 0, median_latency_us = 0;
  int retest_rounds = 0;
  std::vector<std::string> notes;
  std::optional<AcceptCounterThresholds> counter_thresholds;  ///< absent: counters not read
  /// Every host NIC's counter growth over the whole all-pairs phase (flaps between rows, hosts
  /// sitting a round out); empty when not read.
  std::vector<fabric::NicDelta> nic_counters;
  std::optional<AcceptAllreduce> allreduce;  ///< absent with --skip-allreduce
  std::optional<Stragglers> stragglers;      ///< null with --skip-allreduce
  /// The test fault hooks set during the run ("NAME=value (ranks)"); any: pass is false.
  std::vector<std::string> fault_hooks;
  std::optional<AcceptBaseline> baseline;  ///< accept --baseline only
  /// --pattern: one verdict per round and size; empty with the default (pairs).
  std::vector<AcceptPattern> patterns;
  std::optional<AcceptCongestion> congestion;  ///< absent without --congestion
};

/// "auto", "ucx" or "verbs".
const char* name_of(AcceptTransport t) noexcept;

}  // namespace ibscope::results
