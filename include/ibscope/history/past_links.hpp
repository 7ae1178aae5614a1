#pragma once
/// The accept links the history holds over a window of time, grouped per link (either order),
/// for `ibscope accept --baseline db` (docs/baselines.md): what a link measured in its own
/// recent runs.

#include <cstddef>
#include <string>
#include <vector>

#include "ibscope/history/database.hpp"

namespace ibscope::history {

/// One link's figures in the window, oldest first; its ends ordered (host, NIC) a <= b.
struct PastLink {
  std::string host_a, nic_a, host_b, nic_b;
  std::vector<double> bw_gbps;
  std::vector<double> latency_us;  ///< the runs that measured a latency
};

struct PastLinks {
  std::vector<PastLink> links;  ///< sorted by their ends
  std::size_t runs = 0;         ///< complete accept runs in the window
};

/// Every link of the complete runs started at or after `since_utc` ("2026-11-07T10:00:00Z";
/// the runs' started_utc compare as text). Throws HistoryError.
PastLinks past_links(Database& db, const std::string& since_utc);

}  // namespace ibscope::history
