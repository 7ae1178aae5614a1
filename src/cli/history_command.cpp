// `ibscope history`: the local history of runs (docs/history.md). Lists and filters the runs
// indexed into a SQLite database, follows one link or one row over time, and (re)builds the
// database from results files, which stay the source of truth. Reads files and the database
// only, never the network.

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/core/random_hex.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/history/history_json.hpp"
#include "ibscope/history/indexer.hpp"
#include "ibscope/history/queries.hpp"
#include "ibscope/history/schema.hpp"

namespace ibscope::cli {
namespace {

namespace fs = std::filesystem;
using history::Database;

constexpr const char* kDefaultDb = "results/ibscope.db";

struct HistoryFlags {
  std::string db;  ///< "" = kDefaultDb (queries) or FOLDER/ibscope.db (index/rebuild of one folder)
  history::RunFilter filter;
  std::string size, link;
  bool json = false;
  std::vector<std::string> paths;  ///< index, rebuild
};

constexpr const char* kHistoryFooter = R"(Examples:
  ibscope history                                   # the latest runs in results/ibscope.db
  ibscope history --host node07 --since 2026-12-01  # runs with a rank on node07 since then
  ibscope history --collective allreduce --size 1M  # that row's median busbw over time
  ibscope history --link h3:mlx5_2                  # every link of that NIC over time
  ibscope history --link h3-h7 --json               # the link between h3 and h7, as JSON
  ibscope history index /scratch/old-results nccl-tests/*.txt --db results/ibscope.db
  ibscope history rebuild results                   # drop results/ibscope.db and re-index

Every run indexes its results file into ibscope.db in its --out folder (--db PATH elsewhere,
--no-history not at all), after the file is written; a database that cannot take it gets a
warning and the file stays complete. The files are the source of truth: `history rebuild`
makes the database again from them. Tables, columns and the migration policy:
docs/history.md.
Exit status: 0 success (an empty answer included), 2 usage (a bad filter, a missing,
corrupt or newer database, a named file that is not a results file).)";

std::string db_path(const HistoryFlags& f, bool building) {
  if (!f.db.empty()) return f.db;
  std::error_code ec;
  if (building && f.paths.size() == 1 && fs::is_directory(f.paths.front(), ec)) {
    return (fs::path(f.paths.front()) / std::string(history::kDefaultDbName)).string();
  }
  return kDefaultDb;
}

history::RunFilter filter_of(const HistoryFlags& f) {
  history::RunFilter filter = f.filter;
  if (!f.size.empty()) {
    filter.size_bytes = units::parse_size_bytes(f.size, "--size");
    if (filter.collective.empty()) {
      throw UsageError("--size needs --collective (the row whose size it is)");
    }
  }
  return filter;
}

std::string date_of(const std::string& utc) { return utc.size() >= 19 ? utc.substr(0, 19) : utc; }

std::string status_of(const history::RunRecord& r) {
  if (!r.complete) return "incomplete";
  if (r.accept_pass) return *r.accept_pass ? "pass" : "FAIL";
  return "ok";
}

void print_runs(const std::string& db, const std::vector<history::RunRecord>& runs) {
  fmt::print("# history {}: {} run(s), newest first\n", db, runs.size());
  fmt::print("{:<19}  {:<46} {:<10} {:>5} {:>5} {:>6} {:>5}  {:<10} {:<24} {}\n", "# started_utc",
             "run", "command", "hosts", "ranks", "rows", "links", "status", "hardware",
             "host_names");
  for (const auto& r : runs) {
    fmt::print("{:<19}  {:<46} {:<10} {:>5} {:>5} {:>6} {:>5}  {:<10} {:<24} {}\n",
               date_of(r.started_utc), r.run_id, r.subcommand, r.host_count, r.ranks, r.rows,
               r.links, status_of(r), r.hardware,
               r.hosts.size() > 60 ? r.hosts.substr(0, 57) + "..." : r.hosts);
  }
}

void print_links(const std::string& db, const std::string& spec,
                 const std::vector<history::LinkRecord>& links) {
  fmt::print("# history {}: link {}, {} measurement(s), oldest first\n", db, spec, links.size());
  fmt::print("{:<19}  {:<46} {:<24} {:<24} {:>9} {:>9} {:>9}  {:<8} {}\n", "# started_utc", "run",
             "end_a", "end_b", "bw_GB/s", "exp_GB/s", "lat_us", "verdict", "counters");
  for (const auto& l : links) {
    fmt::print(
        "{:<19}  {:<46} {:<24} {:<24} {:>9.2f} {:>9} {:>9}  {:<8} {}\n", date_of(l.started_utc),
        l.run_id, l.host_a + ":" + l.nic_a, l.host_b + ":" + l.nic_b, l.measured_gbps,
        l.expected_gbps > 0 ? fmt::format("{:.2f}", l.expected_gbps) : "-",
        l.latency_us > 0 ? fmt::format("{:.2f}", l.latency_us) : "-", l.pass ? "pass" : "FAIL",
        l.pass ? l.counters : l.verdict.substr(6) + (l.counters.empty() ? "" : "; " + l.counters));
  }
}

std::string history_gbps_text(double gbps) { return gbps > 0 ? fmt::format("{:.4g}", gbps) : "-"; }

void print_rows(const std::string& db, const history::RunFilter& filter,
                const std::vector<history::RowRecord>& rows) {
  fmt::print(
      "# history {}: {}{} over time, {} row(s), oldest first; busbw_med: busbw at the "
      "median call (busbw x time / median); spread: 1.4826 MAD / median of the samples\n",
      db, filter.collective,
      filter.size_bytes ? " " + units::format_size(*filter.size_bytes) : std::string(),
      rows.size());
  fmt::print(
      "{:<19}  {:<46} {:>9} {:>5} {:<10} {:<8} {:<5} {:>11} {:>8} {:>14} {:>10} {:>10}  {}\n",
      "# started_utc", "run", "size", "ranks", "algorithm", "type", "place", "median_us",
      "spread_%", "busbw_med_GB/s", "busbw_GB/s", "algbw_GB/s", "hosts");
  for (const auto& r : rows) {
    fmt::print(
        "{:<19}  {:<46} {:>9} {:>5} {:<10} {:<8} {:<5} {:>11.2f} {:>8.1f} {:>14} {:>10} {:>10}  "
        "{}\n",
        date_of(r.started_utc), r.run_id, units::format_size(r.size_bytes), r.ranks,
        r.algorithm.empty() ? "-" : r.algorithm, r.type, r.in_place ? "in" : "out", r.median_us,
        r.spread_pct, history_gbps_text(r.busbw_median_gbps), history_gbps_text(r.busbw_gbps),
        history_gbps_text(r.algbw_gbps), r.hosts.empty() ? "-" : r.hosts);
  }
}

int run_query(const HistoryFlags& f) {
  const history::RunFilter filter = filter_of(f);
  const std::string db_file = db_path(f, false);
  Database db = history::open_history(db_file, Database::Mode::kReadOnly);
  if (!f.link.empty()) {
    const auto spec = history::parse_link_spec(f.link, history::known_hosts(db));
    const auto links = history::link_history(db, spec, filter);
    if (f.json) {
      fmt::print("{}", history::to_json(links));
    } else {
      print_links(db_file, f.link, links);
    }
    return 0;
  }
  if (!filter.collective.empty()) {
    const auto rows = history::row_history(db, filter);
    if (f.json) {
      fmt::print("{}", history::to_json(rows));
    } else {
      print_rows(db_file, filter, rows);
    }
    return 0;
  }
  const auto runs = history::find_runs(db, filter);
  if (f.json) {
    fmt::print("{}", history::to_json(runs));
  } else {
    print_runs(db_file, runs);
  }
  return 0;
}

/// Indexes every path; named files that could not be read make the exit status 2.
int index_into(Database& db, const std::vector<std::string>& paths, const fs::path& shown) {
  int added = 0, already = 0, skipped = 0, status = 0;
  for (const auto& p : paths) {
    std::error_code ec;
    const bool folder = fs::is_directory(p, ec);
    const auto report = history::index_paths(db, {fs::path(p)});
    added += report.added;
    already += report.already;
    skipped += static_cast<int>(report.skipped.size());
    for (const auto& why : report.skipped) fmt::print("# skipped: {}\n", why);
    if (!folder && !report.skipped.empty()) status = 2;
  }
  fmt::print("# history {}: {} run(s) added, {} already indexed, {} file(s) skipped\n",
             shown.string(), added, already, skipped);
  return status;
}

int run_index(const HistoryFlags& f) {
  Database db = history::open_history(db_path(f, true), Database::Mode::kReadWrite);
  return index_into(db, f.paths, db.path());
}

/// Builds the database anew beside the old one and renames it over it: a rebuild that fails
/// leaves the old database as it was. Replaces only an ibscope history (any version, so also
/// a corrupt index of one that still opens, or one of a newer ibscope).
int run_rebuild(const HistoryFlags& f) {
  const fs::path target = db_path(f, true);
  std::error_code ec;
  if (fs::exists(target, ec)) {
    Database old = Database::open(target, Database::Mode::kReadOnly);
    auto s = old.prepare("PRAGMA application_id");
    s.step();
    if (s.column_int(0) != history::kApplicationId) {
      throw history::HistoryError(
          fmt::format("{}: not an ibscope history database, not replaced; choose another --db",
                      target.string()));
    }
  }
  const fs::path fresh = target.string() + ".rebuild-" + random_hex(6);
  int status = 0;
  try {
    Database db = history::open_history(fresh, Database::Mode::kReadWrite);
    status = index_into(db, f.paths, target);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (...) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(fresh.string() + suffix, ec);
    throw;
  }
  // A stale log of the old file must not be read with the new one.
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(target.string() + suffix, ec);
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(fresh.string() + suffix, ec);
  fs::rename(fresh, target, ec);
  if (ec) {
    throw SystemError(
        fmt::format("history rebuild: renaming {} to {}", fresh.string(), target.string()),
        ec.value());
  }
  fmt::print("# history {}: rebuilt\n", target.string());
  return status;
}

void add_filter_flags(CLI::App& sub, HistoryFlags& f) {
  sub.add_option("--host", f.filter.host, "Runs with a rank on HOST")->type_name("HOST");
  sub.add_option("--nic", f.filter.nic,
                 "Runs that used this NIC (mlx5_2 any port, or mlx5_2:1), on any host")
      ->type_name("NIC");
  sub.add_option("--collective", f.filter.collective,
                 "Show this row over time: a collective (allreduce, ...), a p2p test (latency, "
                 "bw, bibw) or a probe (write_bw, ...): its median time, spread and busbw")
      ->type_name("NAME");
  sub.add_option("--size", f.size, "With --collective: only rows of this size (1M, 4096, ...)")
      ->type_name("BYTES");
  sub.add_option("--since", f.filter.since_utc,
                 "Runs started at or after this UTC date or time (2026-12-01, "
                 "2026-12-01T10:00:00Z)")
      ->type_name("DATE");
  sub.add_option("--until", f.filter.until_utc,
                 "Runs started at or before this UTC date (its whole day) or time")
      ->type_name("DATE");
  sub.add_option("--limit", f.filter.limit, "At most N runs, rows or links, the newest (0: all)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub.add_option("--link", f.link,
                 "Show one link over time (accept runs): HOST, HOST:NIC, HOST-HOST or "
                 "HOST:NIC-HOST:NIC (\"<->\" or \",\" also separate the ends); date, run, "
                 "bandwidth, verdict, counters")
      ->type_name("LINK");
  sub.add_flag("--json", f.json, "Print the answer as JSON (member names carry their units)");
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto f = std::make_shared<HistoryFlags>();
  auto* sub = app.add_subcommand(
      "history",
      "The local history of runs (SQLite, rebuilt from the results files): list and filter "
      "runs, one link or one collective row over time; `history index|rebuild` fill it");
  sub->add_option("--db", f->db,
                  "The history database (default: results/ibscope.db; index and rebuild of one "
                  "folder: FOLDER/ibscope.db)")
      ->type_name("PATH");
  add_filter_flags(*sub, *f);
  sub->footer(kHistoryFooter);
  sub->require_subcommand(0, 1);
  sub->fallthrough();

  auto* index = sub->add_subcommand(
      "index",
      "Index results files and nccl-tests outputs (files or folders, recursively) "
      "into the history; a file indexed before is not added again");
  index->add_option("PATH", f->paths, "Results files, nccl-tests outputs or folders")->required();
  index->footer(
      "Examples:\n  ibscope history index results\n  ibscope history index a.json b.json "
      "all_reduce_perf.txt --db results/ibscope.db\nExit status: 0 indexed (files inside a "
      "folder that are not results are listed and skipped), 2 a named file is not a results "
      "file or nccl-tests output, or the database is unusable.");
  auto* rebuild = sub->add_subcommand(
      "rebuild",
      "Drop the history and index these folders and files again (the files are "
      "the source of truth); the old database stays until the new one is complete");
  rebuild->add_option("PATH", f->paths, "Folders (and files) to index")->required();
  rebuild->footer(
      "Examples:\n  ibscope history rebuild results\n  ibscope history rebuild /scratch/runs "
      "--db /scratch/runs/ibscope.db\nExit status: 0 rebuilt, 2 usage (the --db file is not "
      "an ibscope history, a named file is not a results file).");
  return {sub, [f, index, rebuild]() -> int {
            if (*index) return run_index(*f);
            if (*rebuild) return run_rebuild(*f);
            return run_query(*f);
          }};
}

}  // namespace ibscope::cli
