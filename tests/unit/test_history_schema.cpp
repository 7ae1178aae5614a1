// The history's schema versions (history/schema.hpp): an older database is migrated in place
// with its runs kept; a newer one, another application's database and a corrupt file are
// refused with a message naming the file.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "common/temp_dir.hpp"
#include "ibscope/history/schema.hpp"

namespace ibscope {
namespace {

bool history_has_column(history::Database& db, const char* table, const char* column) {
  auto s = db.prepare(
      fmt::format("SELECT count(*) FROM pragma_table_info('{}') WHERE name = '{}'", table, column));
  s.step();
  return s.column_int(0) == 1;
}

bool history_has_index(history::Database& db, const char* name) {
  auto s = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?1");
  s.bind(1, name);
  s.step();
  return s.column_int(0) == 1;
}

}  // namespace

TEST_CASE("history schema: the migrations are numbered 1..current", "[history][schema]") {
  const auto all = history::migrations();
  REQUIRE(static_cast<int>(all.size()) == history::kSchemaVersion);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i].to == static_cast<int>(i) + 1);
}

TEST_CASE("history schema: a version-1 database is migrated, its runs kept", "[history][schema]") {
  test::TempDir dir;
  const auto path = dir.path() / "old.db";
  {
    auto db = history::Database::open(path, history::Database::Mode::kReadWrite);
    history::migrate(db, 1);  // what the first ibscope with a history made
    CHECK(db.user_version() == 1);
    CHECK_FALSE(history_has_column(db, "links", "counters"));
    db.exec(
        "INSERT INTO runs (path, content_hash, run_id, tool, tool_version, subcommand, command, "
        "started_utc, complete, hosts, host_count, ranks, hardware, indexed_utc) VALUES "
        "('/r/a.json', '00', 'a', 'ibscope', '0.1', 'accept', 'ibscope accept', "
        "'2026-11-01T00:00:00Z', 1, 'h1,h2', 2, 2, '-', '2026-11-01T00:00:00Z');"
        "INSERT INTO links (run, host_a, nic_a, host_b, nic_b, measured_gbps, pass, verdict) "
        "VALUES (1, 'h1', 'mlx5_0:1', 'h2', 'mlx5_0:1', 48.5, 1, 'pass');");
  }
  auto db = history::open_history(path, history::Database::Mode::kReadOnly);  // migrates
  CHECK(db.user_version() == history::kSchemaVersion);
  CHECK(history_has_column(db, "links", "counters"));
  CHECK(history_has_index(db, "links_by_a"));
  auto s = db.prepare("SELECT measured_gbps, counters FROM links");
  REQUIRE(s.step());
  CHECK(s.column_double(0) == 48.5);
  CHECK(s.column_is_null(1));
}

TEST_CASE("history schema: a newer, foreign or corrupt database is refused by name",
          "[history][schema]") {
  test::TempDir dir;
  const auto newer = dir.path() / "newer.db";
  {
    auto db = history::open_history(newer, history::Database::Mode::kReadWrite);
    db.set_user_version(history::kSchemaVersion + 5);
  }
  for (const auto mode :
       {history::Database::Mode::kReadWrite, history::Database::Mode::kReadOnly}) {
    CHECK_THROWS_WITH(history::open_history(newer, mode), Catch::Contains(newer.string()) &&
                                                              Catch::Contains("is newer than") &&
                                                              Catch::Contains("history rebuild"));
  }

  const auto foreign = dir.path() / "foreign.db";
  {
    auto db = history::Database::open(foreign, history::Database::Mode::kReadWrite);
    db.exec("CREATE TABLE t (x INTEGER)");
  }
  CHECK_THROWS_WITH(history::open_history(foreign, history::Database::Mode::kReadWrite),
                    Catch::Contains(foreign.string()) && Catch::Contains("not an ibscope history"));

  const auto corrupt = dir.path() / "corrupt.db";
  std::ofstream(corrupt) << std::string(4096, '\x5a');
  CHECK_THROWS_AS(history::open_history(corrupt, history::Database::Mode::kReadWrite),
                  history::HistoryError);
  CHECK_THROWS_WITH(history::open_history(corrupt, history::Database::Mode::kReadWrite),
                    Catch::Contains(corrupt.string()) && Catch::Contains("not a database"));

  CHECK_THROWS_WITH(
      history::open_history(dir.path() / "missing.db", history::Database::Mode::kReadOnly),
      Catch::Contains("missing.db") && Catch::Contains("no history database"));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "missing.db"));
}

TEST_CASE("history schema: a transaction rolls back unless committed", "[history][schema]") {
  test::TempDir dir;
  auto db = history::open_history(dir.path() / "t.db", history::Database::Mode::kReadWrite);
  {
    history::Transaction t(db);
    db.exec("CREATE TABLE scratch (x INTEGER); INSERT INTO scratch VALUES (1)");
  }
  auto s = db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'scratch'");
  s.step();
  CHECK(s.column_int(0) == 0);
}

}  // namespace ibscope
