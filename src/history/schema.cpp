// The history's schema as migrations. Version 1 holds the runs and what they measured; version 2
// adds the per-link counters column and the indexes that make the queries by host, NIC, link,
// collective, size and time instant over thousands of runs (bench/history_bench.cpp). A new
// version appends a Migration here and never edits an old one: a file of any older ibscope is
// migrated through the same steps as a fresh one.

#include "ibscope/history/schema.hpp"

#include <fmt/format.h>

namespace ibscope::history {
namespace {

constexpr const char* kVersion1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  content_hash TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  subcommand TEXT NOT NULL,
  command TEXT NOT NULL,
  started_utc TEXT NOT NULL,
  finished_utc TEXT,
  complete INTEGER NOT NULL,
  error_kind TEXT,
  hosts TEXT NOT NULL,
  host_count INTEGER NOT NULL,
  ranks INTEGER NOT NULL,
  nic_model TEXT,
  nic_rate_gbit REAL,
  gpu TEXT,
  hardware TEXT NOT NULL,
  accept_pass INTEGER,
  indexed_utc TEXT NOT NULL
);
CREATE TABLE hosts (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  host TEXT NOT NULL,
  ranks INTEGER NOT NULL,
  PRIMARY KEY (run, host)
) WITHOUT ROWID;
CREATE TABLE nics (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  host TEXT NOT NULL,
  nic TEXT NOT NULL,
  rate_gbit REAL,
  link_layer TEXT,
  PRIMARY KEY (run, host, nic)
) WITHOUT ROWID;
CREATE TABLE links (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  host_a TEXT NOT NULL,
  nic_a TEXT NOT NULL,
  host_b TEXT NOT NULL,
  nic_b TEXT NOT NULL,
  measured_gbps REAL NOT NULL,
  expected_gbps REAL,
  latency_us REAL,
  pass INTEGER NOT NULL,
  verdict TEXT NOT NULL
);
CREATE TABLE rows (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  algorithm TEXT NOT NULL,
  type TEXT NOT NULL,
  in_place INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  ranks INTEGER NOT NULL,
  host_a TEXT,
  host_b TEXT,
  time_us REAL,
  median_us REAL,
  spread_pct REAL,
  algbw_gbps REAL,
  busbw_gbps REAL,
  busbw_median_gbps REAL,
  wrong INTEGER
);
CREATE INDEX runs_by_path ON runs(path);
)sql";

constexpr const char* kVersion2 = R"sql(
ALTER TABLE links ADD COLUMN counters TEXT;
CREATE INDEX runs_by_start ON runs(started_utc);
CREATE INDEX hosts_by_host ON hosts(host, run);
CREATE INDEX nics_by_nic ON nics(nic, host, run);
CREATE INDEX links_by_a ON links(host_a, nic_a, run);
CREATE INDEX links_by_b ON links(host_b, nic_b, run);
CREATE INDEX links_by_run ON links(run);
CREATE INDEX rows_by_name ON rows(name, size_bytes, run);
CREATE INDEX rows_by_run ON rows(run);
)sql";

constexpr Migration kMigrations[] = {
    {1, "runs, hosts, NICs, links and rows", kVersion1},
    {2, "links.counters; indexes by time, host, NIC, link, collective and size", kVersion2},
};

bool has_tables(Database& db) {
  Statement s = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
  s.step();
  return s.column_int(0) > 0;
}

int application_id(Database& db) {
  Statement s = db.prepare("PRAGMA application_id");
  s.step();
  return static_cast<int>(s.column_int(0));
}

}  // namespace

std::span<const Migration> migrations() noexcept { return kMigrations; }

void migrate(Database& db, int target) {
  const int version = db.user_version();  // the first read: a corrupt file fails here
  if (version > kSchemaVersion) {
    throw HistoryError(fmt::format(
        "{}: history schema version {} is newer than this ibscope's ({}): use the ibscope that "
        "wrote it, or rebuild a database for this one from the results files (`ibscope history "
        "rebuild DIR --db OTHER.db`)",
        db.path().string(), version, kSchemaVersion));
  }
  const int app = application_id(db);
  if (app != kApplicationId && (version != 0 || has_tables(db))) {
    throw HistoryError(fmt::format(
        "{}: not an ibscope history database (application id {:#x}, user version {}); choose "
        "another --db",
        db.path().string(), app, version));
  }
  for (const Migration& m : kMigrations) {
    if (m.to <= version || m.to > target) continue;
    Transaction t(db);
    try {
      db.exec(m.sql);
    } catch (const HistoryError& e) {
      throw HistoryError(
          fmt::format("migrating to history schema version {} ({}): {}", m.to, m.what, e.what()));
    }
    if (m.to == 1) db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
    db.set_user_version(m.to);
    t.commit();
  }
}

Database open_history(const std::filesystem::path& path, Database::Mode mode) {
  if (mode == Database::Mode::kReadOnly) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      throw HistoryError(fmt::format(
          "{}: no history database here: runs index themselves into their results folder's "
          "ibscope.db, or `ibscope history index DIR` makes one",
          path.string()));
    }
  }
  Database db = Database::open(path, mode);
  if (mode == Database::Mode::kReadOnly && db.user_version() < kSchemaVersion) {
    // An older ibscope's file: migrated in place first (this needs write access to it).
    db = Database::open(path, Database::Mode::kReadWrite);
  }
  migrate(db);  // read-only and current: only the checks (newer version, another database)
  return db;
}

}  // namespace ibscope::history
