// The history database (history/): indexing results documents, idempotence, the queries by
// host, NIC, collective, size, time and link, and the best-effort indexing of a written run.

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "common/synthetic_results.hpp"
#include "common/temp_dir.hpp"
#include "ibscope/history/indexer.hpp"
#include "ibscope/history/queries.hpp"
#include "ibscope/history/record.hpp"
#include "ibscope/history/schema.hpp"
#include "ibscope/results/writer.hpp"

namespace ibscope {
namespace {

results::Document history_small_job(const std::string& started_utc) {
  testing::SyntheticJob job;
  job.hosts = 3;
  job.ranks_per_host = 2;
  job.max_bytes = 1 << 20;
  job.algorithms = {"ring", "rd"};
  job.straggler_rows = 1;
  job.soak_windows = 2;  // the generator needs the warm-up window and one more
  results::Document doc = testing::synthetic_results(job);
  doc.started_utc = started_utc;
  return doc;
}

std::int64_t history_count(history::Database& db, const char* table) {
  auto s = db.prepare(std::string("SELECT count(*) FROM ") + table);
  s.step();
  return s.column_int(0);
}

}  // namespace

TEST_CASE("history: a run is indexed once, with its hosts, NICs, links and rows", "[history]") {
  test::TempDir dir;
  auto db = history::open_history(dir.path() / "h.db", history::Database::Mode::kReadWrite);
  const auto doc = history_small_job("2026-12-01T10:00:00Z");
  const std::string text = results::to_text(doc);
  const auto first = history::index_document(db, dir.path() / "run-a.json", text, doc);
  CHECK(first.added);
  CHECK(first.run_id == "run-a");
  CHECK(history_count(db, "runs") == 1);
  CHECK(history_count(db, "hosts") == 3);
  CHECK(history_count(db, "links") == static_cast<std::int64_t>(doc.acceptance->links.size()));
  CHECK(history_count(db, "rows") == static_cast<std::int64_t>(doc.collectives.rows.size()));
  CHECK(history_count(db, "nics") == 6);  // 3 hosts x 2 NICs from the topology

  // The same bytes again: nothing added; under another name: the run moves there.
  CHECK_FALSE(history::index_document(db, dir.path() / "run-a.json", text, doc).added);
  CHECK_FALSE(history::index_document(db, dir.path() / "moved.json", text, doc).added);
  CHECK(history_count(db, "runs") == 1);
  CHECK(history_count(db, "rows") == static_cast<std::int64_t>(doc.collectives.rows.size()));
  const auto runs = history::find_runs(db, {});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].run_id == "moved");
  CHECK(runs[0].ranks == 6);
  CHECK(runs[0].host_count == 3);
  CHECK(runs[0].hardware.find("mlx5") != std::string::npos);
  CHECK(runs[0].links == static_cast<int>(doc.acceptance->links.size()));
  REQUIRE(runs[0].accept_pass.has_value());
  CHECK(*runs[0].accept_pass);
}

TEST_CASE("history: runs filtered by host, NIC, collective, size and time", "[history]") {
  test::TempDir dir;
  auto db = history::open_history(dir.path() / "h.db", history::Database::Mode::kReadWrite);
  for (int day = 1; day <= 5; ++day) {
    auto doc = history_small_job(fmt::format("2026-12-0{}T12:00:00Z", day));
    if (day == 5) doc.job.hosts.assign(doc.job.hosts.size(), "other-host");
    history::index_document(db, dir.path() / fmt::format("d{}.json", day), results::to_text(doc),
                            doc);
  }
  history::RunFilter f;
  CHECK(history::find_runs(db, f).size() == 5);
  CHECK(history::find_runs(db, f).front().run_id == "d5");  // newest first
  f.limit = 2;
  CHECK(history::find_runs(db, f).size() == 2);
  f = {};
  f.host = "gpu-node-0002";
  CHECK(history::find_runs(db, f).size() == 4);
  f = {};
  f.host = "other-host";
  CHECK(history::find_runs(db, f).size() == 1);
  f = {};
  f.nic = "mlx5_1";  // any port
  CHECK(history::find_runs(db, f).size() == 5);
  f.nic = "mlx5_1:1";
  CHECK(history::find_runs(db, f).size() == 5);
  f.nic = "mlx5_9";
  CHECK(history::find_runs(db, f).empty());
  f = {};
  f.since_utc = "2026-12-02";
  f.until_utc = "2026-12-04";  // its whole day
  CHECK(history::find_runs(db, f).size() == 3);
  f.until_utc = "2026-12-04T11:00:00Z";
  CHECK(history::find_runs(db, f).size() == 2);
  f.until_utc = "yesterday";
  CHECK_THROWS_WITH(history::find_runs(db, f), Catch::Contains("--until"));
  f = {};
  f.collective = "allreduce";
  f.size_bytes = 1 << 20;
  CHECK(history::find_runs(db, f).size() == 5);
  f.size_bytes = 3;
  CHECK(history::find_runs(db, f).empty());
  f.collective = "broadcast";
  f.size_bytes.reset();
  CHECK(history::find_runs(db, f).empty());
}

TEST_CASE("history: one collective row over time", "[history]") {
  test::TempDir dir;
  auto db = history::open_history(dir.path() / "h.db", history::Database::Mode::kReadWrite);
  for (int day = 1; day <= 3; ++day) {
    auto doc = history_small_job(fmt::format("2026-12-0{}T12:00:00Z", day));
    for (auto& r : doc.collectives.rows) r.busbw_gbps *= day;  // faster every day
    history::index_document(db, dir.path() / fmt::format("d{}.json", day), results::to_text(doc),
                            doc);
  }
  history::RunFilter f;
  f.collective = "allreduce";
  f.size_bytes = 1 << 20;
  const auto rows = history::row_history(db, f);
  REQUIRE(rows.size() == 6);           // 3 runs x 2 algorithms
  CHECK(rows.front().run_id == "d1");  // oldest first
  CHECK(rows.back().run_id == "d3");
  for (const auto& r : rows) {
    CHECK(r.size_bytes == 1u << 20);
    CHECK(r.median_us > 0);
    CHECK(r.busbw_median_gbps > 0);
    CHECK(r.spread_pct >= 0);
  }
  CHECK(rows[4].busbw_gbps == Approx(3 * rows[0].busbw_gbps).epsilon(1e-9));
  f.host = "nowhere";
  CHECK(history::row_history(db, f).empty());
}

TEST_CASE("history: link specs and one link over time", "[history]") {
  const std::vector<std::string> hosts = {"gpu-node-0001", "gpu-node-0002", "h3", "h7"};
  auto s = history::parse_link_spec("h3:mlx5_2", hosts);
  CHECK(s.host_a == "h3");
  CHECK(s.nic_a == "mlx5_2");
  CHECK(s.host_b.empty());
  s = history::parse_link_spec("h3-h7", hosts);
  CHECK((s.host_a == "h3" && s.host_b == "h7"));
  s = history::parse_link_spec("gpu-node-0001:mlx5_0:1-gpu-node-0002", hosts);
  CHECK(s.host_a == "gpu-node-0001");
  CHECK(s.nic_a == "mlx5_0:1");
  CHECK(s.host_b == "gpu-node-0002");
  s = history::parse_link_spec("gpu-node-0002", hosts);  // a host with '-' in its name
  CHECK(s.host_a == "gpu-node-0002");
  CHECK(s.host_b.empty());
  s = history::parse_link_spec("h3:mlx5_1<->h7:mlx5_1", hosts);
  CHECK((s.host_a == "h3" && s.nic_a == "mlx5_1" && s.host_b == "h7" && s.nic_b == "mlx5_1"));
  CHECK_THROWS_AS(history::parse_link_spec(":mlx5_0", hosts), UsageError);

  test::TempDir dir;
  auto db = history::open_history(dir.path() / "h.db", history::Database::Mode::kReadWrite);
  for (int day = 1; day <= 4; ++day) {
    auto doc = history_small_job(fmt::format("2026-12-0{}T12:00:00Z", day));
    if (day == 3) {
      for (auto& l : doc.acceptance->links) {
        if (l.host_a == "gpu-node-0001" && l.nic_a == "mlx5_1:1") {
          l.pass = false;
          l.measured_gbps = 12.5;
          l.reason = "below 80 % of expected";
        }
      }
    }
    history::index_document(db, dir.path() / fmt::format("d{}.json", day), results::to_text(doc),
                            doc);
  }
  const auto known = history::known_hosts(db);
  CHECK(known.size() == 3);
  const auto nic =
      history::link_history(db, history::parse_link_spec("gpu-node-0001:mlx5_1", known), {});
  // Rail-aligned over 3 hosts: that NIC has a link to each other host, 2 per run.
  REQUIRE(nic.size() == 8);
  CHECK(nic[0].run_id == "d1");
  CHECK(nic[4].run_id == "d3");
  CHECK(nic[7].run_id == "d4");
  CHECK_FALSE(nic[4].pass);
  CHECK(nic[4].measured_gbps == 12.5);
  CHECK(nic[4].verdict.find("below 80 %") != std::string::npos);
  CHECK(nic[3].pass);
  CHECK(nic[6].pass);
  // The link named from either end.
  const auto pair =
      history::link_history(db, history::parse_link_spec("gpu-node-0002-gpu-node-0001", known), {});
  CHECK(pair.size() == 8);  // two rails between the two hosts, 4 runs
  history::RunFilter f;
  f.since_utc = "2026-12-03";
  CHECK(history::link_history(db, history::parse_link_spec("gpu-node-0001-gpu-node-0002", known), f)
            .size() == 4);
}

TEST_CASE("history: a written run is indexed beside it - a bad database is a warning only",
          "[history]") {
  test::TempDir dir;
  auto doc = history_small_job("2026-12-01T10:00:00Z");
  const auto path = results::write(doc, dir.path());
  const std::string before = [&] {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  CHECK(history::record_run(path, doc, {}));
  {
    auto db = history::open_history(dir.path() / "ibscope.db", history::Database::Mode::kReadOnly);
    CHECK(history::find_runs(db, {}).size() == 1);
  }
  CHECK_FALSE(history::record_run(path, doc, {false, ""}));  // --no-history

  // A corrupt database and a database in an unwritable folder: false, the file untouched.
  const auto corrupt = dir.path() / "corrupt.db";
  std::ofstream(corrupt) << std::string(8192, 'x');
  CHECK_FALSE(history::record_run(path, doc, {true, corrupt.string()}));
  const auto locked_dir = dir.path() / "ro";
  std::filesystem::create_directories(locked_dir);
  ::chmod(locked_dir.c_str(), 0500);
  if (::geteuid() != 0) {
    CHECK_FALSE(history::record_run(path, doc, {true, (locked_dir / "h.db").string()}));
  }
  ::chmod(locked_dir.c_str(), 0700);
  std::ifstream in(path);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == before);
}

TEST_CASE("history: index a folder, skip what is not a results file", "[history]") {
  test::TempDir dir;
  for (int day = 1; day <= 3; ++day) {
    auto doc = history_small_job(fmt::format("2026-12-0{}T12:00:00Z", day));
    results::write(doc, dir.path());
  }
  std::ofstream(dir.path() / "notes.txt") << "not nccl-tests output\n";
  std::ofstream(dir.path() / "x.json.partial") << "{}";
  auto db = history::open_history(dir.path() / "ibscope.db", history::Database::Mode::kReadWrite);
  auto report = history::index_paths(db, {dir.path()});
  CHECK(report.added == 3);
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].find("notes.txt") != std::string::npos);
  report = history::index_paths(db, {dir.path(), dir.path() / "missing.json"});
  CHECK(report.added == 0);
  CHECK(report.already == 3);
  CHECK(report.skipped.size() == 2);
  history::clear(db);
  CHECK(history::find_runs(db, {}).empty());
  CHECK(history::index_paths(db, {dir.path()}).added == 3);
}

}  // namespace ibscope

namespace ibscope {

TEST_CASE("history: an nccl-tests output is indexed as a run of nccl-tests rows", "[history]") {
  test::TempDir dir;
  auto db = history::open_history(dir.path() / "h.db", history::Database::Mode::kReadWrite);
  const std::string file =
      std::string(IBSCOPE_NCCL_TESTS_FIXTURES) + "/all_reduce_perf-h100-16ranks.txt";
  const auto r = history::index_file(db, file);
  CHECK(r.added);
  CHECK(r.run_id == "all_reduce_perf-h100-16ranks");
  const auto runs = history::find_runs(db, {});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].tool == "nccl-tests");
  CHECK(runs[0].rows > 0);
  history::RunFilter f;
  f.collective = "allreduce";
  f.limit = 0;
  const auto rows = history::row_history(db, f);
  CHECK(static_cast<int>(rows.size()) == runs[0].rows);
  CHECK(rows.back().busbw_gbps > 0);
  CHECK_FALSE(history::index_file(db, file).added);
}

}  // namespace ibscope
