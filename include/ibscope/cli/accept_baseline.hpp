#pragma once
/// `ibscope accept --baseline FILE`: the baseline file as the past the links are judged against
/// (accept/history.hpp), with the shipped reference that matches the run's hardware
/// (docs/baselines.md).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/accept/history.hpp"
#include "ibscope/results/baseline.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::cli {

/// A measured baseline gives its links and rows; a reference (kind "reference") gives its
/// link figure as the class reference. Never throws but bad_alloc.
accept::History history_of(const results::Baseline& baseline, const std::string& path);

/// Once the job's topology is known (rank 0): for a measured baseline, the shipped reference
/// matching the run's hardware (none: unchanged); a warning when the run's hardware differs
/// from the baseline's. Throws Error when a shipped reference is broken (a build defect).
accept::History complete_history(accept::History history, const results::Baseline& baseline,
                                 const std::vector<topo::HostTopology>& hosts,
                                 std::vector<std::string>& warnings);

/// `accept --baseline db`: every link's own accept runs of the last `days` days (before `now_utc`,
/// "2026-12-07T10:00:00Z") in the history database `db`, as robust statistics, with the shipped
/// reference matching the run's hardware. A window without runs is a warning (nothing known).
/// Throws history::HistoryError (missing, corrupt or newer database).
accept::History history_from_db(const std::filesystem::path& db, int days,
                                const std::string& now_utc,
                                const std::vector<topo::HostTopology>& hosts,
                                std::vector<std::string>& warnings);

/// `now_utc` - `days` days, in the same form.
std::string utc_days_before(const std::string& now_utc, int days);

}  // namespace ibscope::cli
