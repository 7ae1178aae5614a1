// Best effort by design: the results file is the record and is already on disk when this runs;
// the history is an index that `ibscope history index` or `rebuild` can always catch up.

#include "ibscope/history/record.hpp"

#include <fstream>
#include <sstream>

#include "ibscope/core/log.hpp"
#include "ibscope/history/indexer.hpp"
#include "ibscope/history/schema.hpp"

namespace ibscope::history {

std::filesystem::path db_for(const std::filesystem::path& results_file,
                             const HistoryOptions& options) {
  if (!options.db.empty()) return options.db;
  return results_file.parent_path() / std::string(kDefaultDbName);
}

namespace {

void warn_not_indexed(const std::filesystem::path& db_path,
                      const std::filesystem::path& results_file, const char* why) noexcept {
  try {
    log::warn(
        "history {}: the run was not indexed ({}); the results file is complete, and "
        "`ibscope history index {}` indexes it later",
        db_path.string(), why, results_file.string());
  } catch (...) {  // NOLINT(bugprone-empty-catch): a warning that cannot be printed is lost
  }
}

}  // namespace

bool record_run(const std::filesystem::path& results_file, const results::Document& doc,
                const HistoryOptions& options) noexcept {
  if (!options.enabled) return false;
  std::filesystem::path db_path;
  try {
    db_path = db_for(results_file, options);
    std::ifstream in(results_file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw UsageError(results_file.string() + ": cannot read it back");
    Database db = open_history(db_path, Database::Mode::kReadWrite);
    index_document(db, results_file, std::move(text).str(), doc);
    return true;
  } catch (const std::exception& e) {
    warn_not_indexed(db_path, results_file, e.what());
  }
  return false;
}

bool record_file(const std::filesystem::path& results_file,
                 const HistoryOptions& options) noexcept {
  if (!options.enabled) return false;
  std::filesystem::path db_path;
  try {
    db_path = db_for(results_file, options);
    Database db = open_history(db_path, Database::Mode::kReadWrite);
    index_file(db, results_file);
    return true;
  } catch (const std::exception& e) {
    warn_not_indexed(db_path, results_file, e.what());
  }
  return false;
}

}  // namespace ibscope::history
