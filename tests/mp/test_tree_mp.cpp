// Multi-process tree and double-binary-tree all-reduces: the real binary, the local launcher,
// real UCX traffic over shared memory and over TCP; every row verified (#wrong == 0). Rank
// counts cover the degenerate trees (1, 2), odd and even p, and p that is and is not a power of
// two, so interior ranks with one and two children, cut subtrees and both dbt shapes all run.

#include <fmt/format.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "../common/sanitized.hpp"
#include "collective_checks.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

constexpr int kAlgorithms = 2;  // -A tree,dbt

ProcessResult run_trees(int np, const std::string& sizes, const std::string& type,
                        const std::string& op, std::map<std::string, std::string> env = {},
                        std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"allreduce", "-A",  "tree,dbt", "--np",         std::to_string(np),
                                "--sizes",   sizes, "-d",       type,           "-o",
                                op,          "-n",  "2",        "-w",           "1",
                                "--timeout", "30",  "--out",    make_temp_dir()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_process({std::move(args), std::move(env), 180});
}

}  // namespace

TEST_CASE("tree and dbt over shared memory with 1 to 8 local ranks", "[mp][tree][shm]") {
  for (int np : {1, 2, 3, 4, 5, 7, 8}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_trees(np, sizes_for(np, 4, 128 * 1024), "float", "sum");
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      const auto doc = load_run_results(r);
      check_all_rows_verified(doc, 6 * 2 * kAlgorithms);
      CHECK(doc.at("job").at("ranks").get<int>() == np);
      if (np > 1) {
        const std::string t = doc.at("environment").at("transports").at("0->1").get<std::string>();
        INFO(t);
        CHECK((t.find("sysv") != std::string::npos || t.find("posix") != std::string::npos));
      }
    }
  }
}

TEST_CASE("tree and dbt over UCX tcp with 2 3 and 5 local ranks", "[mp][tree][tcp]") {
  for (int np : {2, 3, 5}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r =
          run_trees(np, sizes_for(np, 4, 128 * 1024), "float", "sum", {{"UCX_TLS", "tcp"}});
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      const auto doc = load_run_results(r);
      check_all_rows_verified(doc, 6 * 2 * kAlgorithms);
      const std::string t = doc.at("environment").at("transports").at("1->0").get<std::string>();
      INFO(t);
      CHECK(t.find("tcp/") != std::string::npos);
    }
  }
}

TEST_CASE("tree and dbt verify every type and op in and out of place", "[mp][tree][types]") {
  // 6 types x 3 ops x sizes x 2 placements x 2 algorithms.
  SECTION("shared memory, 5 ranks") {
    const auto r = run_trees(5, type_sweep_sizes("0,8,24,8008"), "all", "all");
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 6 * 3 * 5 * 2 * kAlgorithms);
  }
  SECTION("tcp, 2 ranks") {
    const auto r = run_trees(2, type_sweep_sizes("8,8008"), "all", "all", {{"UCX_TLS", "tcp"}});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 6 * 3 * 3 * 2 * kAlgorithms);
  }
}

TEST_CASE("tree and dbt with tiny chunks and chunks below the element size", "[mp][tree][chunk]") {
  SECTION("--chunk 1 with 8-byte elements, 4 ranks") {
    // One element per chunk (chunk_bytes < element size): hundreds of chunks per tree.
    const auto r = run_trees(4, "8,24,8008", "double", "sum", {}, {"--chunk", "1"});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 3 * 2 * kAlgorithms);
  }
  SECTION("--chunk 1001 (not a multiple of the element) with floats, 3 ranks") {
    const auto r = run_trees(3, "4036,1048588", "float", "sum", {}, {"--chunk", "1001"});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 2 * 2 * kAlgorithms);
  }
  SECTION("--chunk 4K with 1 MiB, 7 ranks") {
    const auto r = run_trees(7, "1048588", "int32", "max", {}, {"--chunk", "4K"});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 1 * 2 * kAlgorithms);
  }
}

TEST_CASE("a rank killed during dbt makes the others exit naming it", "[mp][tree][faults]") {
  Running job = start_process({{"allreduce", "-A", "dbt", "--np", "4", "--sizes", "1M", "-n",
                                "1000000", "--timeout", "30", "--out", make_temp_dir()},
                               {},
                               90});
  const int victim = rank_pid(job, 2);
  REQUIRE(victim > 0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto [res, after_kill_s] = kill_rank_and_wait(job, victim);
  INFO(describe(res));
  CHECK(!res.timed_out);
  CHECK(res.exit_code == 1);
  CHECK(after_kill_s < 15);  // well within --timeout 30
  CHECK(res.err.find("rank 2 (") != std::string::npos);
}
