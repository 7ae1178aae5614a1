#pragma once
/// `ibscope watch` (docs/counters.md, "ibscope watch"): what one interval of a node's NIC
/// counters says. Rates per NIC from the counters' growth (NicDelta), and the findings: error
/// growth, a flap, congestion, and rail imbalance (a NIC moving far less than the other NICs of
/// its node while the node is busy: the symptom of a rail that NCCL stopped using). Pure: no
/// I/O, no clock; the sampler (cli/watch_command.cpp) feeds it readings.

#include <cstdint>
#include <string>
#include <vector>

#include "ibscope/fabric/counters.hpp"

namespace ibscope::fabric {

/// When a finding is raised. Defaults are documented in docs/counters.md and `watch --help`.
struct WatchThresholds {
  /// Rail imbalance: a NIC moving less than this fraction of the node's median NIC (0.10: 10 %);
  /// 0 turns the check off.
  double imbalance_fraction = 0.10;
  /// ... over this window (seconds of the latest intervals), so that a short pause of one NIC
  /// between two collectives is not a finding.
  double imbalance_window_s = 10;
  /// ... while the node's median NIC moves at least this (B/s): an idle node is not imbalanced.
  double imbalance_min_bytes_per_s = 1e6;
  /// The NICs compared, when not empty: names ("mlx5_0:1", "eth0") or RDMA devices ("mlx5_0",
  /// every port of it); the others are never compared (e.g. a DGX's storage NICs beside its
  /// compute rails). Empty: every RDMA port, or the interfaces that carried traffic.
  std::vector<std::string> rails;
};

/// Whether `nic` is one of `rails` (WatchThresholds::rails): equal to an entry, or a port
/// "<entry>:<n>" of a device entry.
bool is_listed_rail(const std::string& nic, const std::vector<std::string>& rails);

/// One NIC's growth over one interval.
struct NicRates {
  std::string nic, driver;
  double interval_s = 0;
  std::uint64_t traffic_bytes = 0;  ///< sent + received (NicDelta::traffic_bytes)
  double bytes_per_s = 0;
  std::uint64_t errors = 0, congestion = 0, flaps = 0;  ///< counts grown in the interval
  bool appeared = false, vanished = false;
};

/// The rates of one NicDelta.
NicRates nic_rates(const NicDelta& delta);

enum class WatchFindingKind { kErrors, kFlap, kCongestion, kRailImbalance };

/// "errors", "flap", "congestion", "rail_imbalance" (JSONL, Prometheus label values).
std::string_view name_of(WatchFindingKind kind) noexcept;

struct WatchFinding {
  WatchFindingKind kind = WatchFindingKind::kErrors;
  std::string nic;
  std::string detail;  ///< one line: the counters that moved, or the rates compared
  bool operator==(const WatchFinding&) const = default;
};

/// The findings of one interval that need no history: error growth (or an error counter stuck
/// at its saturating maximum, which hides growth), flaps (a flap counter grew, or the NIC
/// appeared or vanished), congestion (its counters grew). In `deltas`' order.
std::vector<WatchFinding> interval_findings(const std::vector<NicDelta>& deltas);

/// One NIC's traffic over a window, for the rail comparison.
struct RailTraffic {
  std::string nic, driver;
  double bytes_per_s = 0;
  /// Whether the NIC is a rail to compare: an RDMA port always; a plain interface (a host
  /// without RDMA) only once it has carried traffic at the minimum rate during the watch, so
  /// that an idle management port is not a finding. The namespace's "tcp" never.
  bool compared = true;
};

/// Rail imbalance among the NICs of one node: the compared NICs of each driver ("mlx5" ports
/// among themselves, interfaces among themselves), when there are at least 2 and their median
/// moves at least `t.imbalance_min_bytes_per_s`, each one below `t.imbalance_fraction` of that
/// median is a finding. With 2 NICs the median is their mean: one idle rail beside a busy one
/// is found. `window_s` is only quoted in the detail.
std::vector<WatchFinding> rail_imbalance(const std::vector<RailTraffic>& nics,
                                         const WatchThresholds& t, double window_s);

}  // namespace ibscope::fabric
