#pragma once
/// Puts results files into the history database (docs/history.md): one run per file, keyed by
/// the hash of the file's bytes, so indexing a file again changes nothing (a moved file gets its
/// new path). The files stay the source of truth: the database is rebuilt from them.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/history/database.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::history {

/// The name of the history database a run writes beside its results file.
inline constexpr std::string_view kDefaultDbName = "ibscope.db";

/// 16 hex digits: 64-bit FNV-1a of `bytes` (identifies a file's content, not a secret).
std::string content_hash(std::string_view bytes);

struct IndexResult {
  std::filesystem::path file;  ///< absolute
  std::string run_id;          ///< the file's name without its extension
  bool added = false;          ///< false: the same content was indexed already
};

/// Indexes `doc`, read from `file` whose bytes are `text`, in one transaction. Throws
/// HistoryError (the database failed; nothing of this run is then in it).
IndexResult index_document(Database& db, const std::filesystem::path& file, std::string_view text,
                           const results::Document& doc);
/// Reads `file` (a results file or nccl-tests output; results/loader.hpp) and indexes it;
/// content already indexed is not parsed again. Throws UsageError (unreadable or invalid file)
/// or HistoryError.
IndexResult index_file(Database& db, const std::filesystem::path& file);

struct IndexReport {
  int added = 0, already = 0;
  std::vector<std::string> skipped;  ///< "<file>: <why>", files that could not be read
};

/// Indexes files and folders (recursively: *.json results files, nccl-tests' *.txt and *.log;
/// never checkpoints, locks, CSVs or databases). A file that cannot be read is skipped and
/// named; a missing path is skipped too. Throws HistoryError when the database fails.
IndexReport index_paths(Database& db, const std::vector<std::filesystem::path>& paths);

/// Empties every table (the schema stays): `history rebuild`.
void clear(Database& db);

}  // namespace ibscope::history
