// RAII over SQLite's C API: one place that calls sqlite3_*, so every failure names the database
// file and SQLite's own reason (extended result codes: "database is locked", "file is not a
// database", "attempt to write a readonly database").

#include "ibscope/history/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <system_error>
#include <utility>

namespace ibscope::history {

Database Database::open(const std::filesystem::path& path, Mode mode) {
  if (mode == Mode::kReadWrite && path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);  // open() reports the failure
  }
  sqlite3* raw = nullptr;
  const int flags =
      mode == Mode::kReadWrite ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string reason = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    throw HistoryError(
        fmt::format("{}: cannot open the history database: {}", path.string(), reason));
  }
  Database db(raw, path);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // The first statement reads the header: a file that is not a database fails here.
  db.exec("PRAGMA foreign_keys = ON");
  if (mode == Mode::kReadWrite) {
    // WAL: readers (`ibscope history`) never block the writer of a run that just finished.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
  }
  return db;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

std::string Database::describe(std::string_view what, int code) const {
  const char* message =
      db_ != nullptr && sqlite3_errcode(db_) == code ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  return fmt::format("{}: {}: {}", path_.string(), what, message);
}

void Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string reason = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    const auto first_line = text.substr(0, text.find('\n'));
    throw HistoryError(fmt::format("{}: {}: {}", path_.string(), first_line, reason));
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    throw HistoryError(describe(fmt::format("preparing '{}'", sql.substr(0, 60)), rc));
  }
  return Statement(*this, stmt);
}

int Database::user_version() {
  Statement s = prepare("PRAGMA user_version");
  s.step();
  return static_cast<int>(s.column_int(0));
}

void Database::set_user_version(int version) {
  exec(fmt::format("PRAGMA user_version = {}", version));
}

std::int64_t Database::last_insert_id() const noexcept { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check_bind(int code, int index) {
  if (code != SQLITE_OK) throw HistoryError(db_->describe(fmt::format("binding ?{}", index), code));
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  check_bind(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                               SQLITE_TRANSIENT),
             index);
  return *this;
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const char* sql = sqlite3_sql(stmt_);
  throw HistoryError(db_->describe(
      fmt::format("'{}'", std::string_view(sql != nullptr ? sql : "").substr(0, 60)), rc));
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::column_int(int column) const noexcept {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const noexcept {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::column_is_null(int column) const noexcept {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!open_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor never throws; SQLite rolls back
  }                // an unfinished transaction when the connection closes anyway
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace ibscope::history
