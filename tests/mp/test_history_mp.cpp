// `ibscope history` on real runs: two small `ibscope allreduce` runs and one `ibscope accept`
// between two emulated hosts write their results into one --out folder and index themselves
// into its ibscope.db; the queries find them by collective and size and follow the accept link;
// `history rebuild` gives the same answers from the files; a database that cannot be written
// is a warning and the run's results file is still written.

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "emulated_hosts.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

std::vector<std::string> history_allreduce(const std::string& dir, const char* size) {
  return {"allreduce", "--np", "2", "-A",          "ring", "-b",        size, "-e",    size, "-n",
          "3",         "-w",   "1", "--warmup-ms", "0",    "--timeout", "30", "--out", dir};
}

ProcessResult history_cli(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"history"};
  all.insert(all.end(), args.begin(), args.end());
  return run_cli(all, 60);
}

// The lines of `out` that are not comments.
std::vector<std::string> history_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < out.size()) {
    const auto end = out.find('\n', at);
    const std::string line = out.substr(at, end - at);
    if (!line.empty() && line[0] != '#') lines.push_back(line);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return lines;
}

}  // namespace

TEST_CASE("history: real runs index themselves - queries by collective, size and link - rebuild",
          "[mp][history]") {
  const std::string dir = make_temp_dir();
  const std::string db = dir + "/ibscope.db";
  for (const char* size : {"1K", "64K"}) {
    const auto r = run_process({history_allreduce(dir, size), {}, 120});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("not indexed") == std::string::npos);
  }
  const auto accept = run_emulated_hosts(
      2, {"accept", "--transport", "ucx", "--timeout", "30", "--bw-size", "64K", "--bw-iters", "4",
          "--lat-iters", "50", "--retests", "0", "--skip-allreduce", "--out", dir});
  INFO(describe(accept[0]));
  REQUIRE(!results_path(accept[0]).empty());
  REQUIRE(std::filesystem::exists(db));

  auto answers = [&] {
    std::vector<std::string> out;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--db", db},
             {"--db", db, "--collective", "allreduce"},
             {"--db", db, "--collective", "allreduce", "--size", "64K", "--json"},
             {"--db", db, "--link", "emu0-emu1"},
             {"--db", db, "--link", "emu1", "--json"}}) {
      const auto r = history_cli(args);
      INFO(describe(r));
      CHECK(r.exit_code == 0);
      out.push_back(r.out);
    }
    return out;
  };
  const auto before = answers();
  CHECK(history_lines(before[0]).size() == 3);  // 2 allreduce + 1 accept, newest first
  // The accept is the newest, but may start within the same second as the last sweep (the
  // times have seconds only), so only its presence is checked.
  const auto listed = history_lines(before[0]);
  CHECK(std::count_if(listed.begin(), listed.end(), [](const std::string& l) {
          return l.find(" accept ") != std::string::npos;
        }) == 1);
  CHECK(before[0].find("rows") != std::string::npos);
  CHECK(history_lines(before[1]).size() == 4);  // 1K and 64K, in and out of place
  CHECK(before[1].find("busbw_med_GB/s") != std::string::npos);
  const auto rows = nlohmann::json::parse(before[2]);
  REQUIRE(rows.size() == 2);  // in and out of place
  CHECK(rows[0].at("in_place") != rows[1].at("in_place"));
  CHECK(rows[0].at("size_bytes") == 65536);
  CHECK(rows[0].at("algorithm") == "ring");
  CHECK(rows[0].at("median_us").get<double>() > 0);
  CHECK(rows[0].at("busbw_median_gbps").get<double>() > 0);
  REQUIRE(history_lines(before[3]).size() == 1);  // the one link between the two hosts
  CHECK(before[3].find("bw_GB/s") != std::string::npos);
  const auto links = nlohmann::json::parse(before[4]);
  REQUIRE(links.size() == 1);
  CHECK(links[0].at("measured_gbps").get<double>() > 0);
  CHECK((links[0].at("host_a") == "emu1" || links[0].at("host_b") == "emu1"));

  // Indexing the folder again adds nothing; rebuild makes the same answers from the files.
  const auto again = history_cli({"index", dir});
  INFO(describe(again));
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("0 run(s) added, 3 already indexed") != std::string::npos);
  const auto rebuilt = history_cli({"rebuild", dir});
  INFO(describe(rebuilt));
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(rebuilt.out.find("3 run(s) added") != std::string::npos);
  CHECK(answers() == before);

  // Filters and bad input.
  CHECK(history_lines(history_cli({"--db", db, "--host", "emu0"}).out).size() == 1);
  CHECK(history_lines(history_cli({"--db", db, "--since", "2999-01-01"}).out).empty());
  const auto bad = history_cli({"--db", db, "--size", "1M"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--size needs --collective") != std::string::npos);
  const auto missing = history_cli({"--db", dir + "/none.db"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("none.db") != std::string::npos);
}

TEST_CASE("history: a database that cannot take the run is a warning - the results file stays",
          "[mp][history]") {
  const std::string dir = make_temp_dir();
  const std::string corrupt = dir + "/corrupt.db";
  std::ofstream(corrupt) << std::string(8192, 'x');
  auto args = history_allreduce(dir, "1K");
  args.insert(args.end(), {"--db", corrupt});
  const auto r = run_process({args, {}, 120});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK(!results_path(r).empty());
  CHECK(r.err.find("history " + corrupt + ": the run was not indexed") != std::string::npos);
  auto skip = history_allreduce(dir, "1K");
  skip.push_back("--no-history");
  const auto none = run_process({skip, {}, 120});
  INFO(describe(none));
  CHECK(none.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/ibscope.db"));
  const auto refused = history_cli({"rebuild", dir, "--db", corrupt});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find(corrupt) != std::string::npos);
}
