#pragma once
/// What `ibscope history` asks of the database (docs/history.md): runs by filter, one link over
/// time, one row (collective or test, size) over time. Every query is indexed (schema.hpp), so
/// its cost is that of the answer, not of the history's size. Times are the runs' started_utc.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/history/database.hpp"

namespace ibscope::history {

/// Filters, all optional, combined with AND.
struct RunFilter {
  std::string host;        ///< a run with a rank on this host
  std::string nic;         ///< a run that used this NIC ("mlx5_2" or "mlx5_2:1"), any host
  std::string collective;  ///< a run with rows of this collective or test ("allreduce", "write_bw")
  std::optional<std::uint64_t> size_bytes;  ///< ... of this size
  std::string since_utc, until_utc;  ///< "2026-12-01" or "2026-12-01T10:00:00Z"; until inclusive
  int limit = 50;                    ///< newest first; 0: no limit
};

struct RunRecord {
  std::int64_t id = 0;
  std::string path, run_id, tool, subcommand, command, started_utc, hosts, hardware;
  int host_count = 0, ranks = 0, rows = 0, links = 0;
  bool complete = true;
  std::optional<bool> accept_pass;
};

/// Newest first. Throws HistoryError.
std::vector<RunRecord> find_runs(Database& db, const RunFilter& filter);

/// One link in the history: which runs measured it and what they found.
struct LinkSpec {
  std::string host_a, nic_a;  ///< nic "" = any NIC of host_a
  std::string host_b, nic_b;  ///< host_b "" = any peer
};

/// Reads "h3", "h3:mlx5_2", "h3-h7", "h3:mlx5_2-h7:mlx5_2" (or "<->" or "," between the two
/// ends). A '-' inside a host name is allowed: a split is chosen where both ends are hosts in
/// the history (`known_hosts`). Throws UsageError for an empty end.
LinkSpec parse_link_spec(const std::string& text, const std::vector<std::string>& known_hosts);
/// Every host in the history, sorted.
std::vector<std::string> known_hosts(Database& db);

struct LinkRecord {
  std::string started_utc, run_id;
  std::string host_a, nic_a, host_b, nic_b;
  double measured_gbps = 0, expected_gbps = 0, latency_us = 0;
  bool pass = false;
  std::string verdict, counters;
};

/// Oldest first (a link over time), at most `limit` newest (0: all). Throws HistoryError.
std::vector<LinkRecord> link_history(Database& db, const LinkSpec& link, const RunFilter& filter);

struct RowRecord {
  std::string started_utc, run_id, kind, name, algorithm, type;
  bool in_place = false;
  std::uint64_t size_bytes = 0;
  int ranks = 0;
  std::string hosts;  ///< p2p and probe rows: "a-b"
  double time_us = 0, median_us = 0, spread_pct = 0, algbw_gbps = 0, busbw_gbps = 0,
         busbw_median_gbps = 0;
};

/// The rows of filter.collective (required) at filter.size_bytes (every size when empty),
/// oldest first, the other filters applied to their runs. Throws HistoryError.
std::vector<RowRecord> row_history(Database& db, const RunFilter& filter);

}  // namespace ibscope::history
