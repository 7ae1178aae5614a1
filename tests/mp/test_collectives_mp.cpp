// Multi-process reduce-scatter, all-gather and broadcast, and algorithm selection (-A all, the
// tuning table it writes, -A auto with --tuning): the real binary, real UCX traffic between
// real processes over shared memory and TCP, every row verified.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "../common/sanitized.hpp"
#include "collective_checks.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

ProcessResult run_collective(const std::string& collective, int np, const std::string& sizes,
                             const std::string& type, std::vector<std::string> extra = {},
                             std::map<std::string, std::string> env = {}) {
  std::vector<std::string> args{
      collective, "--np", std::to_string(np), "--sizes", sizes,   "-d",           type, "-n", "2",
      "-w",       "1",    "--timeout",        "30",      "--out", make_temp_dir()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_process({std::move(args), std::move(env), 180});
}

void check_verified(const nlohmann::json& doc, const std::string& collective,
                    std::size_t expected_rows) {
  check_all_rows_verified(doc, expected_rows);
  for (const auto& r : doc.at("collectives").at("rows")) CHECK(r.at("collective") == collective);
}

}  // namespace

TEST_CASE("reduce-scatter allgather and broadcast over shared memory with 1 to 8 ranks",
          "[mp][collectives][shm]") {
  for (int np : {1, 2, 3, 4, 5, 7, 8}) {
    for (const char* c : {"reduce_scatter", "allgather", "broadcast"}) {
      DYNAMIC_SECTION(c << " np " << np) {
        std::vector<std::string> extra;
        if (std::string(c) == "broadcast") extra = {"--root", std::to_string(np - 1)};
        const auto r = run_collective(c, np, sizes_for(np, 4), "float", extra);
        INFO(describe(r));
        REQUIRE(r.exit_code == 0);
        const auto doc = load_run_results(r);
        check_verified(doc, c, 6 * 2);
        if (std::string(c) == "broadcast") {
          CHECK(doc.at("collectives").at("rows").at(0).at("root").get<int>() == np - 1);
          CHECK(doc.at("collectives").at("rows").at(0).at("op") == "none");
        }
      }
    }
  }
}

TEST_CASE("reduce-scatter allgather and broadcast over UCX tcp", "[mp][collectives][tcp]") {
  for (int np : {2, 3}) {
    for (const char* c : {"reduce_scatter", "allgather", "broadcast"}) {
      DYNAMIC_SECTION(c << " np " << np) {
        const auto r = run_collective(c, np, sizes_for(np, 4), "float", {}, {{"UCX_TLS", "tcp"}});
        INFO(describe(r));
        REQUIRE(r.exit_code == 0);
        check_verified(load_run_results(r), c, 6 * 2);
      }
    }
  }
}

TEST_CASE("reduce-scatter verifies every type and op and the others every type",
          "[mp][collectives][types]") {
  SECTION("reduce_scatter") {
    const auto r =
        run_collective("reduce_scatter", 3, type_sweep_sizes("0,8,24,8008"), "all", {"-o", "all"});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_verified(load_run_results(r), "reduce_scatter", 5 * 6 * 3 * 2);
  }
  for (const char* c : {"allgather", "broadcast"}) {
    DYNAMIC_SECTION(c) {
      const auto r = run_collective(c, 3, type_sweep_sizes("0,8,24,8008"), "all");
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      check_verified(load_run_results(r), c, 5 * 6 * 2);
    }
  }
}

TEST_CASE("an injected corruption is caught in every collective", "[mp][collectives][verify]") {
  for (const char* c : {"reduce_scatter", "allgather", "broadcast"}) {
    DYNAMIC_SECTION(c) {
      const auto r =
          run_collective(c, 3, "4096,1M", "float", {}, {{"IBSCOPE_FAULT_CORRUPT_RANK", "2"}});
      INFO(describe(r));
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("verification failed") != std::string::npos);
      // Named: a range-for over a member of a temporary would outlive it.
      const auto doc = load_run_results(r);
      for (const auto& row : doc.at("collectives").at("rows")) {
        CHECK(row.at("wrong").get<int>() == 1);
      }
    }
  }
}

TEST_CASE("an all-gather swap is caught at the block size where the old fill collided",
          "[mp][collectives][verify][misplace]") {
  // 200144 B of floats on 2 ranks: blocks of 25018 = 65521 - 40503 elements, where rank 1's
  // block equalled rank 0's element by element (#wrong was 0); 200148 B was caught before too.
  const auto r = run_process({{"allgather", "--np", "2", "--sizes", "200144,200148", "-d", "float",
                               "-n", "1", "-w", "0", "--timeout", "30", "--out", make_temp_dir()},
                              {{"IBSCOPE_FAULT_MISPLACE", "0:swap-blocks"}},
                              120});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  const auto doc = load_run_results(r);
  REQUIRE(doc.at("collectives").at("rows").size() == 4);  // 2 sizes, out of place and in place
  for (const auto& row : doc.at("collectives").at("rows")) {
    INFO(row.at("size_bytes").get<std::uint64_t>());
    // Every element of both swapped blocks, on rank 0.
    CHECK(row.at("wrong").get<std::uint64_t>() >= 2 * 25018);
  }
}

TEST_CASE("algorithms side by side write a tuning table that auto then follows",
          "[mp][collectives][tuning]") {
  const auto all = run_collective("allreduce", 2, "8,64K,1M", "float", {"-A", "all"});
  INFO(describe(all));
  REQUIRE(all.exit_code == 0);
  const auto doc = load_run_results(all);
  const auto& rows = doc.at("collectives").at("rows");
  std::set<std::string> algorithms;
  for (const auto& r : rows) algorithms.insert(r.at("algorithm").get<std::string>());
  CHECK(algorithms.size() >= 2);
  CHECK(rows.size() == algorithms.size() * 3 * 2);
  // Side by side: the rows of one size come together, one per algorithm.
  CHECK(rows.at(0).at("size_bytes") == rows.at(2).at("size_bytes"));
  CHECK(rows.at(0).at("algorithm") != rows.at(2).at("algorithm"));
  CHECK(all.out.find("Fastest allreduce algorithm by size") != std::string::npos);
  REQUIRE(doc.contains("tuning"));
  const auto& entry = doc.at("tuning").at("entries").at(0);
  CHECK(entry.at("ranks") == 2);
  CHECK(entry.at("ranges").back().at("max_bytes").is_null());

  const std::string results = results_path(all);
  const auto autorun =
      run_collective("allreduce", 2, "8,64K,1M,4M", "float", {"-A", "auto", "--tuning", results});
  INFO(describe(autorun));
  REQUIRE(autorun.exit_code == 0);
  const auto adoc = load_run_results(autorun);
  for (const auto& r : adoc.at("collectives").at("rows")) {
    INFO(r.dump());
    CHECK(r.at("selected_by").get<std::string>().find(results) != std::string::npos);
    // The algorithm that ran is the table's choice for that size.
    const auto bytes = r.at("size_bytes").get<std::uint64_t>();
    std::string expected;
    for (const auto& range : entry.at("ranges")) {
      if (range.at("max_bytes").is_null() || bytes <= range.at("max_bytes").get<std::uint64_t>()) {
        expected = range.at("algorithm").get<std::string>();
        break;
      }
    }
    CHECK(r.at("algorithm") == expected);
  }
  CHECK(autorun.out.find("auto:") != std::string::npos);

  SECTION("another rank count falls back to the default rule") {
    const auto r4 =
        run_collective("allreduce", 3, "8,4M", "float", {"-A", "auto", "--tuning", results});
    INFO(describe(r4));
    REQUIRE(r4.exit_code == 0);
    const auto doc4 = load_run_results(r4);
    for (const auto& r : doc4.at("collectives").at("rows")) {
      CHECK(r.at("selected_by") == "auto: default rule");
    }
  }
}

TEST_CASE("tuning and root mistakes are usage errors", "[mp][collectives][cli]") {
  const std::string dir = make_temp_dir();
  const std::string garbage = dir + "/garbage.json";
  std::ofstream(garbage) << "{not json";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"allreduce", "--tuning", garbage, "-A", "auto"}, "not valid JSON"},
      {{"allreduce", "--tuning", garbage}, "only by -A auto"},
      {{"broadcast", "--np", "2", "--root", "5", "--sizes", "8", "--out", dir},
       "--root 5: not a rank"},
      {{"allgather", "-A", "magic"}, "unknown algorithm 'magic' for allgather"},
      {{"allreduce", "--chunk", "4K", "-e", "8G"}, "more than"},
  };
  for (const auto& [args, text] : cases) {
    const auto r = run_process({args, {}, 60});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(text) != std::string::npos);
  }
}

TEST_CASE("chunks smaller than one element still move whole elements", "[mp][collectives][chunk]") {
  // Regression: the ring's scratch slots were sized by --chunk, not by the elements a chunk
  // carries, so --chunk 3 with 8-byte elements overran them.
  for (const char* c : {"allreduce", "reduce_scatter", "allgather", "broadcast"}) {
    DYNAMIC_SECTION(c) {
      const auto r = run_collective(c, 3, "0,8,24,808", "double", {"--chunk", "3"});
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      check_verified(load_run_results(r), c, 4 * 2);
    }
  }
}
