#pragma once
/// What `ibscope accept` measures and how it judges: the transport of the all-pairs phase, the
/// expected rate, the thresholds, retests, and the all-reduce straggler sweep.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/accept/congestion.hpp"
#include "ibscope/accept/expected_rate.hpp"
#include "ibscope/accept/history.hpp"
#include "ibscope/accept/link_verdict.hpp"
#include "ibscope/accept/loopback_verdict.hpp"
#include "ibscope/accept/pairing.hpp"
#include "ibscope/accept/pattern_verdict.hpp"
#include "ibscope/accept/straggler.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/measure/traffic_pattern.hpp"
#include "ibscope/probes/loopback.hpp"
#include "ibscope/probes/probe_options.hpp"
#include "ibscope/results/acceptance.hpp"

namespace ibscope::accept {

using results::AcceptTransport;

/// "auto" | "ucx" | "verbs" (names: results::name_of). Throws UsageError.
AcceptTransport parse_accept_transport(std::string_view text);

struct AcceptOptions {
  AcceptTransport transport = AcceptTransport::kAuto;
  /// The links' data rate in Gb/s (--expect-gbps); 0: from each port's speed x width (verbs),
  /// or no absolute test (UCX without it).
  double expect_line_gbit = 0;
  std::optional<LinkKind> link_kind;  ///< empty: from the port's link layer / UCX transport
  Thresholds thresholds;
  StragglerThresholds straggler;
  int retests = 2;  ///< suspect links are measured up to this many more times
  /// Which pairs (--pairs, --pairs-seed): hosts rail to rail, all / random:K / log / first.
  PairSelection pairs = default_pairs();

  // All-pairs phase over UCX: latency ping-pong, then bandwidth in both directions.
  std::uint64_t lat_bytes = 8;
  int lat_iters = 200;
  std::uint64_t bw_bytes = 1ULL << 20;
  int bw_window = 16;
  int bw_iters = 10;
  int warmup = 2;
  // All-pairs phase over verbs: write_lat and bidirectional write_bw (probes/).
  int verbs_bw_iters = 2000;
  int verbs_lat_iters = 1000;
  probes::ProbeOptions verbs;  ///< devices, GID index, QP tuning, NUMA binding

  // All-reduce sweep with per-rank arrival times.
  bool allreduce = true;
  std::vector<std::string> algorithms;  ///< empty: every registered all-reduce algorithm
  std::vector<std::uint64_t> allreduce_bytes{64ULL << 10, 4ULL << 20};
  int allreduce_iters = 20;
  int allreduce_warmup = 3;

  /// Preflight loopback of each host's NICs (--no-loopback, --loopback-budget, -size, -slow-pct,
  /// -min-fraction; accept/loopback_phase.hpp).
  bool loopback = true;
  probes::LoopbackOptions loopback_probe;
  LoopbackThresholds loopback_thresholds;

  double timeout_s = 60;

  /// Read the NIC counters around every row and the whole all-pairs phase, and judge them
  /// (--no-nic-counters turns both off).
  bool nic_counters = true;
  CounterThresholds counter_thresholds;

  /// Past measurements to judge the links (and all-reduce rows) against as well (--baseline,
  /// accept/history.hpp); null: none. Read on rank 0.
  std::shared_ptr<const History> history;
  HistoryThresholds history_thresholds;
  /// --pattern incast:K | one-to-many:K | bisection: a pattern phase after the all-pairs
  /// phase, over UCX between each host's first rank (accept/pattern_phase.hpp), judged by
  /// pattern_thresholds; pairs (the default): none. --pattern-hubs picks the hubs.
  measure::TrafficPattern pattern;
  measure::HubSelection pattern_hubs;
  PatternThresholds pattern_thresholds;
  /// Victims' latency and all-reduce under congestors, after the other phases (--congestion).
  CongestionOptions congestion;

  /// The test fault hooks set on any rank (job::JobContext): each one fails the verdict.
  std::vector<FaultHook> fault_hooks;
};

/// Throws UsageError for values that cannot work (fractions outside (0, 1], sizes of 0, ...).
void validate(const AcceptOptions& options);

}  // namespace ibscope::accept
