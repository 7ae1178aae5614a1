#pragma once
/// Past measurements that `ibscope accept` judges a run against, as well as against the line
/// rate and the other links (docs/baselines.md): per link and per collective row, robust
/// statistics of earlier runs, and a public reference figure for the class of hardware. The
/// source does not matter here: a baseline file fills it (cli, results/baseline.hpp), a history
/// database may too. Plain data; lookups never throw.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/measure/robust_stats.hpp"

namespace ibscope::accept {

/// One link's past: its ends as accept names them (host, NIC), either order.
struct LinkHistory {
  std::string host_a, host_b, nic_a, nic_b;
  measure::RobustStats bw_gbps;     ///< GB/s, the link's figure (slower direction / bidir half)
  measure::RobustStats latency_us;  ///< n == 0: not measured
};

/// One collective row's past: (collective, algorithm, type, size, ranks).
struct RowHistory {
  std::string collective, algorithm, type;
  std::uint64_t size_bytes = 0;
  int ranks = 0;
  measure::RobustStats busbw_gbps, time_us;
};

/// A public figure for this class of hardware (never a measurement of this fabric).
struct ClassReference {
  std::string name;         ///< "ConnectX-7 NDR 400 Gb/s"
  double link_bw_gbps = 0;  ///< one link's payload rate, GB/s
  std::string source;       ///< URL and what it says
};

struct History {
  std::string source;  ///< "baseline.json (measured, 5 runs)", for messages and the results
  std::vector<LinkHistory> links;
  std::vector<RowHistory> rows;
  std::optional<ClassReference> reference;

  /// The link between (host_a, nic_a) and (host_b, nic_b), in either order; null if unknown.
  const LinkHistory* find_link(const std::string& host_a, const std::string& nic_a,
                               const std::string& host_b, const std::string& nic_b) const noexcept;
  const RowHistory* find_row(const std::string& collective, const std::string& algorithm,
                             const std::string& type, std::uint64_t size_bytes,
                             int ranks) const noexcept;
};

/// --baseline-drop-pct and the noise band: a figure fails when it is more than drop_pct below
/// its median AND below median - noise_k x spread (spread = 1.4826 x MAD of the runs), so that
/// neither a noisy link nor a tight band with a trivial drop fails.
struct HistoryThresholds {
  double drop_pct = 10;
  double noise_k = 3;
};

/// What the past says of one link's figure.
struct HistoryFinding {
  bool known = false;  ///< the history holds this link
  double median_gbps = 0, spread_gbps = 0;
  std::size_t runs = 0;
  double drop_pct = 0;  ///< 100 x (median - measured) / median; negative when faster
  bool below = false;   ///< fails: beyond the threshold and outside the noise band
  /// The class reference, when one matched: its figure and how far below it (negative: above).
  std::string reference_name;
  double reference_gbps = 0, reference_drop_pct = 0;
  bool below_reference = false;  ///< more than drop_pct below the reference (a warning)
  std::string reason;            ///< why it fails ("" when it does not)
  std::string reference_reason;  ///< the reference comparison when below it ("" otherwise)
};

/// Judges one figure (pure). `past` null: not in the history (known false; a reference may
/// still apply).
HistoryFinding judge_history(const LinkHistory* past, double measured_gbps,
                             const std::optional<ClassReference>& reference,
                             const HistoryThresholds& thresholds);

/// A warning line per collective row more than the threshold below its past busbw and outside
/// its noise band (rows are judged by warnings only: accept's all-reduce sweep is short).
struct RowFigure {
  std::string collective, algorithm, type;
  std::uint64_t size_bytes = 0;
  int ranks = 0;
  double busbw_gbps = 0;
};
std::vector<std::string> row_history_warnings(const std::vector<RowFigure>& rows,
                                              const History& history,
                                              const HistoryThresholds& thresholds);

}  // namespace ibscope::accept
