#pragma once
/// The run's own entry in the history: after a results file is written (atomically, by
/// results/), the job indexes it into the history database, best effort (docs/history.md).

#include <filesystem>
#include <string>

#include "ibscope/results/document.hpp"

namespace ibscope::history {

/// Where a run's history goes (--db, --no-history).
struct HistoryOptions {
  bool enabled = true;
  std::string db;  ///< "" = kDefaultDbName in the results file's folder
};

/// The database a run that writes `results_file` indexes into.
std::filesystem::path db_for(const std::filesystem::path& results_file,
                             const HistoryOptions& options);

/// Indexes the written `results_file` (whose content is `doc`) into its history. Never throws
/// and never touches the results file: a database that cannot take it (locked past the busy
/// timeout, corrupt, read-only, from a newer ibscope) gets one warning on stderr naming it.
/// Returns whether the run is in the history.
bool record_run(const std::filesystem::path& results_file, const results::Document& doc,
                const HistoryOptions& options) noexcept;

/// The same for a results file written without a Document at hand (`ibscope recover`): read
/// and indexed. Never throws.
bool record_file(const std::filesystem::path& results_file, const HistoryOptions& options) noexcept;

}  // namespace ibscope::history
