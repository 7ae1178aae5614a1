#pragma once
/// The history database as RAII handles over SQLite (docs/history.md): a connection, a prepared
/// statement and a transaction. Every failure is a HistoryError that names the database file
/// and SQLite's reason. sqlite3.h stays out of this header.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "ibscope/core/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace ibscope::history {

/// A history database could not be opened, read or written: locked past the busy timeout,
/// corrupt, not a database, from a newer ibscope, read-only. A usage error (exit status 2): the
/// results files are the source of truth, and `ibscope history rebuild` makes a new database.
class HistoryError : public UsageError {
 public:
  using UsageError::UsageError;
};

/// How long a writer waits for another process's lock before giving up (SQLite's busy timeout).
inline constexpr int kBusyTimeoutMs = 5000;

class Statement;

/// One connection, move-only; closed by the destructor (noexcept). Opened in WAL mode with a
/// busy timeout of kBusyTimeoutMs, foreign keys on.
class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  /// Opens `path` (kReadWrite creates it and its folder when missing). Only opens: the schema is
  /// schema.hpp's business (open_history() does both). Throws HistoryError.
  static Database open(const std::filesystem::path& path, Mode mode);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const std::filesystem::path& path() const noexcept { return path_; }
  /// Runs one or more statements without results. Throws HistoryError.
  void exec(std::string_view sql);
  /// Compiles one statement. Throws HistoryError.
  Statement prepare(std::string_view sql);
  /// PRAGMA user_version: the schema's version (0 for a new file). Throws HistoryError.
  int user_version();
  void set_user_version(int version);
  /// The rowid of the last INSERT on this connection.
  std::int64_t last_insert_id() const noexcept;
  /// "<path>: <what>: <SQLite's message>" for `code`.
  std::string describe(std::string_view what, int code) const;

 private:
  Database(sqlite3* db, std::filesystem::path path) noexcept : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  friend class Statement;
};

/// One prepared statement, move-only, finalized by the destructor. Parameters are 1-based,
/// columns 0-based, as in SQLite.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind_null(int index);
  /// Steps once: true while a row is ready, false when done. Throws HistoryError.
  bool step();
  /// Steps to the end (statements without results). Throws HistoryError.
  void run();
  /// Ready for new bindings and steps.
  void reset() noexcept;

  std::int64_t column_int(int column) const noexcept;
  double column_double(int column) const noexcept;
  std::string column_text(int column) const;
  bool column_is_null(int column) const noexcept;

 private:
  Statement(Database& db, sqlite3_stmt* stmt) noexcept : db_(&db), stmt_(stmt) {}
  void check_bind(int code, int index);
  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  friend class Database;
};

/// BEGIN IMMEDIATE (the write lock at once, waiting up to the busy timeout) .. commit(); rolled
/// back by the destructor when not committed (noexcept).
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool open_ = true;
};

}  // namespace ibscope::history
