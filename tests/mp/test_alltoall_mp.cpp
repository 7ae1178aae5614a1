// Multi-process all-to-all: the real binary, real UCX traffic between real processes over shared
// memory and TCP, every algorithm (hier through the intra-host arena), in place and out of place,
// every row verified (every element checked against its sender and its place), and a misplaced
// block caught.

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "collective_checks.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

ProcessResult run_alltoall(int np, const std::string& sizes, const std::string& type,
                           std::map<std::string, std::string> env = {}) {
  return run_process({{"alltoall", "--np", std::to_string(np), "--sizes", sizes, "-d", type, "-A",
                       "all", "-n", "2", "-w", "1", "--timeout", "30", "--out", make_temp_dir()},
                      std::move(env),
                      180});
}

// Every row verified, of both algorithms, and its size whole blocks of count / p elements (as
// nccl-tests rounds it).
void check_rows(const nlohmann::json& doc, int np, std::size_t expected_rows,
                std::size_t elem_bytes) {
  check_all_rows_verified(doc, expected_rows);
  std::set<std::string> algorithms;
  for (const auto& r : doc.at("collectives").at("rows")) {
    INFO(r.dump());
    CHECK(r.at("collective") == "alltoall");
    CHECK(r.at("op") == "none");
    CHECK(r.at("ranks").get<int>() == np);
    const auto size = r.at("size_bytes").get<std::size_t>();
    if (r.at("type") == "float") CHECK(size % (static_cast<std::size_t>(np) * elem_bytes) == 0);
    algorithms.insert(r.at("algorithm").get<std::string>());
  }
  CHECK(algorithms == std::set<std::string>{"pairwise", "scattered", "hier"});
}

}  // namespace

TEST_CASE("alltoall over shared memory with 1 to 8 ranks, every algorithm, in and out of place",
          "[mp][collectives][alltoall][shm]") {
  for (int np : {1, 2, 3, 4, 5, 7, 8}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_alltoall(np, sizes_for(np, 4), "float");
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      check_rows(load_run_results(r), np, 6 * 3 * 2, 4);
    }
  }
}

TEST_CASE("alltoall verifies every type", "[mp][collectives][alltoall][types]") {
  const auto r = run_alltoall(3, "0,8,24,8008,1048584", "all");
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  check_rows(load_run_results(r), 3, 5 * 6 * 3 * 2, 4);
}

TEST_CASE("alltoall over UCX tcp", "[mp][collectives][alltoall][tcp]") {
  const auto r = run_alltoall(2, sizes_for(2, 4), "float", {{"UCX_TLS", "tcp"}});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  check_rows(load_run_results(r), 2, 6 * 3 * 2, 4);
}

TEST_CASE("alltoall counts two swapped blocks of one rank's result",
          "[mp][collectives][alltoall][verify][misplace]") {
  // 3 ranks, 3000 floats: blocks of 1000 elements from different senders.
  const auto r = run_alltoall(3, "12000", "float", {{"IBSCOPE_FAULT_MISPLACE", "1:swap-blocks"}});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("verification failed") != std::string::npos);
  const auto doc = load_run_results(r);
  REQUIRE(doc.at("collectives").at("rows").size() == 6);  // 3 algorithms, out of and in place
  for (const auto& row : doc.at("collectives").at("rows")) {
    INFO(row.dump());
    CHECK(row.at("wrong").get<std::uint64_t>() == 2 * 1000);
  }
}
