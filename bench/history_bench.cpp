// The history at scale (issue 39): indexes `runs` synthetic runs (default 2,000) into a fresh
// database, each a 64-rank job (8 hosts x 8 rails from a pool of 256 hosts; an all-reduce sweep
// 8 B .. 1 GiB with two algorithms; 64 acceptance links; tests/common/synthetic_results.hpp),
// then times each `ibscope history` query: the latest runs, runs by host, by NIC, by collective
// and size, one row over time, one NIC's links and one host pair's links over time, a date
// window. Prints the index time per run, the database size and each query's median of 20.
//
//   ibscope_bench_history [runs (default 2000)] [--db PATH (default: a temp file, removed)]

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/synthetic_results.hpp"
#include "ibscope/history/indexer.hpp"
#include "ibscope/history/queries.hpp"
#include "ibscope/history/schema.hpp"

namespace {

namespace fs = std::filesystem;
namespace history = ibscope::history;
using Clock = std::chrono::steady_clock;

constexpr int kHostPool = 256;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string pool_host(int h) { return fmt::format("node{:03d}", h % kHostPool); }

// The synthetic document as run `i` made it: its hosts taken from the pool, its start a day
// and minute of December 2026, its bandwidth a little different.
void make_run(ibscope::results::Document& doc, const ibscope::results::Document& base, int i) {
  doc = base;
  const int first = (i * 8) % kHostPool;
  auto rename = [&](std::string& host) {
    const int h = std::stoi(host.substr(host.rfind('-') + 1)) - 1;  // gpu-node-0001 -> 0
    host = pool_host(first + h);
  };
  for (auto& h : doc.job.hosts) rename(h);
  for (auto& t : *doc.topology) rename(t.host);
  for (auto& l : doc.acceptance->links) {
    rename(l.host_a);
    rename(l.host_b);
    l.measured_gbps *= 1 + 0.001 * (i % 17);
  }
  for (auto& r : doc.collectives.rows) r.busbw_gbps *= 1 + 0.001 * (i % 13);
  doc.started_utc =
      fmt::format("2026-12-{:02d}T{:02d}:{:02d}:00Z", 1 + (i / 1440) % 28, (i / 60) % 24, i % 60);
}

double median_query_ms(const std::function<std::size_t()>& query, std::size_t& answers) {
  std::vector<double> ms;
  for (int k = 0; k < 20; ++k) {
    const auto t0 = Clock::now();
    answers = query();
    ms.push_back(1e3 * seconds_since(t0));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 2000;
  fs::path db_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--db" && i + 1 < argc) {
      db_path = argv[++i];
    } else {
      runs = std::max(1, std::atoi(argv[i]));
    }
  }
  const bool temporary = db_path.empty();
  if (temporary) {
    db_path = fs::temp_directory_path() / fmt::format("ibscope-history-bench-{}.db", ::getpid());
  }
  ibscope::testing::SyntheticJob job;
  job.hosts = 8;
  job.ranks_per_host = 8;
  job.max_bytes = 1ULL << 30;
  job.algorithms = {"ring", "rd"};
  job.iterations = 20;
  job.straggler_rows = 1;
  job.soak_windows = 2;  // the generator needs the warm-up window and one more
  const auto base = ibscope::testing::synthetic_results(job);

  try {
    auto db = history::open_history(db_path, history::Database::Mode::kReadWrite);
    ibscope::results::Document doc;
    double index_s = 0;
    for (int i = 0; i < runs; ++i) {
      make_run(doc, base, i);
      // The text is hashed only: a distinct one per run stands for the file's bytes.
      const std::string text = fmt::format("synthetic run {}", i);
      const auto t0 = Clock::now();
      history::index_document(db, fmt::format("/bench/run-{:05d}.json", i), text, doc);
      index_s += seconds_since(t0);
    }
    std::error_code ec;
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const auto bytes = fs::file_size(db_path, ec);
    fmt::print("# history bench: {} runs of {} ranks ({} rows, {} links each), {}\n", runs,
               base.job.ranks, base.collectives.rows.size(), base.acceptance->links.size(),
               db_path.string());
    fmt::print("index_ms_per_run {:.2f}  index_s_total {:.1f}  db_MB {:.1f}\n",
               1e3 * index_s / runs, index_s, static_cast<double>(bytes) / 1e6);

    const auto hosts = history::known_hosts(db);
    struct Query {
      const char* name;
      std::function<std::size_t()> run;
    };
    history::RunFilter latest;
    history::RunFilter by_host;
    by_host.host = pool_host(42);
    history::RunFilter by_nic;
    by_nic.nic = "mlx5_3";
    by_nic.limit = 0;
    history::RunFilter by_row;
    by_row.collective = "allreduce";
    by_row.size_bytes = 1 << 20;
    history::RunFilter row_over_time = by_row;
    row_over_time.limit = 0;
    history::RunFilter row_on_host = by_row;
    row_on_host.host = pool_host(42);
    history::RunFilter window;
    window.since_utc = "2026-12-02";
    window.until_utc = "2026-12-02";
    window.limit = 0;
    const auto nic_link = history::parse_link_spec(pool_host(42) + ":mlx5_2", hosts);
    const auto pair_link = history::parse_link_spec(pool_host(40) + "-" + pool_host(41), hosts);
    const std::vector<Query> queries = {
        {"history (latest 50 runs)", [&] { return history::find_runs(db, latest).size(); }},
        {"history --host", [&] { return history::find_runs(db, by_host).size(); }},
        {"history --nic mlx5_3 --limit 0", [&] { return history::find_runs(db, by_nic).size(); }},
        {"history --since D --until D --limit 0",
         [&] { return history::find_runs(db, window).size(); }},
        {"history --collective allreduce --size 1M (newest 50)",
         [&] { return history::row_history(db, by_row).size(); }},
        {"history --collective allreduce --size 1M --limit 0",
         [&] { return history::row_history(db, row_over_time).size(); }},
        {"history --collective allreduce --size 1M --host",
         [&] { return history::row_history(db, row_on_host).size(); }},
        {"history --link HOST:mlx5_2 (newest 50)",
         [&] { return history::link_history(db, nic_link, latest).size(); }},
        {"history --link HOST-HOST --limit 0",
         [&] { return history::link_history(db, pair_link, by_nic).size(); }},
    };
    fmt::print("{:<56} {:>10} {:>9}\n", "# query", "median_ms", "answers");
    for (const auto& q : queries) {
      std::size_t answers = 0;
      const double ms = median_query_ms(q.run, answers);
      fmt::print("{:<56} {:>10.3f} {:>9}\n", q.name, ms, answers);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "history bench: {}\n", e.what());
    return 1;
  }
  if (temporary) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_path.string() + suffix, ec);
  }
  return 0;
}
