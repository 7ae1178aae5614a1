// Multi-process all-to-all-v: the real binary, real UCX traffic between real processes, every
// algorithm (hier through the intra-host arena, at 1 to 8 local ranks), skewed counts (zipf, and
// a file with zero-count peers), every element verified against its sender and its place, the
// rows' imbalance in the results file and the table, and a bad counts file refused before any
// rank starts.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "collective_checks.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

ProcessResult run_alltoallv(int np, const std::string& sizes, const std::string& type,
                            const std::string& counts, std::map<std::string, std::string> env = {},
                            const std::string& algorithms = "all") {
  return run_process({{"alltoallv",   "--np",  std::to_string(np),
                       "--sizes",     sizes,   "-d",
                       type,          "-A",    algorithms,
                       "--counts",    counts,  "-n",
                       "2",           "-w",    "1",
                       "--warmup-ms", "0",     "--timeout",
                       "30",          "--out", make_temp_dir()},
                      std::move(env),
                      120});
}

std::string write_counts_file(const std::string& text) {
  const std::string path = (std::filesystem::path(make_temp_dir()) / "counts.txt").string();
  std::ofstream(path) << text;
  return path;
}

void check_alltoallv_rows(const nlohmann::json& doc, int np, std::size_t expected_rows,
                          const std::set<std::string>& expected_algorithms = {
                              "pairwise", "scattered", "hier"}) {
  check_all_rows_verified(doc, expected_rows);
  std::set<std::string> algorithms;
  for (const auto& r : doc.at("collectives").at("rows")) {
    INFO(r.dump());
    CHECK(r.at("collective") == "alltoallv");
    CHECK(r.at("ranks").get<int>() == np);
    CHECK_FALSE(r.at("in_place").get<bool>());
    CHECK(r.at("send_imbalance").get<double>() >= 1.0);
    CHECK(r.at("recv_imbalance").get<double>() >= 1.0);
    CHECK(r.at("pair_imbalance").get<double>() >= 1.0);
    algorithms.insert(r.at("algorithm").get<std::string>());
  }
  CHECK(algorithms == expected_algorithms);
}

}  // namespace

TEST_CASE("alltoallv with zipf counts at 2 and 4 ranks, every algorithm",
          "[mp][collectives][alltoallv]") {
  for (int np : {2, 4}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_alltoallv(np, "0,4,4004,1048576", "float", "zipf:1.2:7");
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      const auto doc = load_run_results(r);
      check_alltoallv_rows(doc, np, 4 * 3);
      CHECK(doc.at("collectives").at("params").at("counts") == "zipf:1.2:7");
      CHECK(r.out.find("imbalance") != std::string::npos);
    }
  }
}

TEST_CASE("alltoallv with a counts file of zero-count peers, every type",
          "[mp][collectives][alltoallv][types]") {
  // Rank 0 sends nothing; nothing reaches rank 3; rank 2 sends only to rank 1.
  const std::string file = write_counts_file("# sender rows\n0 0 0 0\n5 1 2 0\n0 3 0 0\n1 1 1 0\n");
  const auto r = run_alltoallv(4, "0,24,80016", "all", file);
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto doc = load_run_results(r);
  check_alltoallv_rows(doc, 4, 3 * 6 * 3);
  for (const auto& row : doc.at("collectives").at("rows")) {
    if (row.at("size_bytes").get<std::uint64_t>() == 0) continue;
    INFO(row.dump());
    CHECK(row.at("send_imbalance").get<double>() > 1.0);
  }
}

TEST_CASE("alltoallv hier over shared memory with 1, 3, 5 and 8 local ranks, zipf counts",
          "[mp][collectives][alltoallv][hier]") {
  // 2 and 4 local ranks: the cases above (-A all). Means of 0, 1 and 13 elements per rank leave
  // most blocks empty; 1 MiB fills them all.
  for (int np : {1, 3, 5, 8}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_alltoallv(np, "0,4,52,1048576", "float", "zipf:1.5:3", {}, "hier");
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      check_alltoallv_rows(load_run_results(r), np, 4, {"hier"});
    }
  }
}

TEST_CASE("alltoallv counts a misplaced block", "[mp][collectives][alltoallv][misplace]") {
  const auto r =
      run_alltoallv(2, "40000", "float", "zipf:1", {{"IBSCOPE_FAULT_MISPLACE", "1:swap-blocks"}});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("verification failed") != std::string::npos);
}

TEST_CASE("alltoallv refuses a bad counts file naming its line", "[mp][collectives][alltoallv]") {
  const std::string shape = write_counts_file("1 2\n3 4 5\n");
  auto r = run_alltoallv(2, "1024", "float", shape);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("counts.txt:2:1:") != std::string::npos);
  CHECK(r.err.find("3 number(s) in this row") != std::string::npos);
  const std::string ranks = write_counts_file("1 2 3\n4 5 6\n7 8 9\n");
  r = run_alltoallv(2, "1024", "float", ranks);
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("3 row(s)") != std::string::npos);
  r = run_alltoallv(2, "1024", "float", "zipf:-1");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--counts zipf:-1") != std::string::npos);
}
