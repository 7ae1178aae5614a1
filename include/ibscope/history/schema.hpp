#pragma once
/// The history database's tables and their versions (docs/history.md, "Migration policy").
/// PRAGMA user_version holds the schema version; PRAGMA application_id marks the file as
/// ibscope's. Each version after the first is reached from the one before by a migration, in a
/// transaction of its own, so a database of any older ibscope is brought up to date in place.
/// A database of a newer ibscope is refused (never downgraded); the files rebuild it.

#include <filesystem>
#include <span>

#include "ibscope/history/database.hpp"

namespace ibscope::history {

/// The schema this build writes and reads.
inline constexpr int kSchemaVersion = 2;
/// PRAGMA application_id of an ibscope history ("IBSH").
inline constexpr int kApplicationId = 0x49425348;

/// One step: the statements that take version `to - 1` to `to`.
struct Migration {
  int to = 0;
  const char* what = "";  ///< one line for docs and messages
  const char* sql = "";
};

/// Every migration, from version 1 (the empty file's tables) to kSchemaVersion, in order.
std::span<const Migration> migrations() noexcept;

/// Brings `db` to `target` (default kSchemaVersion): creates the tables in a new file, applies
/// the missing migrations in order (one transaction each). Throws HistoryError naming the file
/// when it is from a newer ibscope (version > kSchemaVersion), when it is some other SQLite
/// database (tables but no ibscope application id), or when SQLite fails (corrupt, read-only).
void migrate(Database& db, int target = kSchemaVersion);

/// Opens the history at `path` with its schema checked: kReadWrite creates and migrates it;
/// kReadOnly refuses a file that is missing, and migrates one of an older ibscope in place (so it
/// needs write access then). Throws HistoryError.
Database open_history(const std::filesystem::path& path, Database::Mode mode);

}  // namespace ibscope::history
