// Multi-process recursive doubling (rd) and Rabenseifner (rhd) all-reduce: the real binary and
// real UCX traffic between real processes over shared memory and over TCP, for powers of two
// and for rank counts that need the pre/post step; every row verified (#wrong == 0).

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "../common/sanitized.hpp"
#include "collective_checks.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

constexpr std::size_t kSizes = 6;
constexpr std::size_t kAlgos = 2;  // rd, rhd
constexpr std::size_t kPlacements = 2;

ProcessResult run_recursive(int np, const std::string& sizes, const std::string& type,
                            const std::string& op, std::map<std::string, std::string> env = {},
                            const std::string& chunk = "0") {
  return run_process({{"allreduce",
                       "-A",
                       "rd,rhd",
                       "--np",
                       std::to_string(np),
                       "--sizes",
                       sizes,
                       "-d",
                       type,
                       "-o",
                       op,
                       "--chunk",
                       chunk,
                       "-n",
                       "2",
                       "-w",
                       "1",
                       "--timeout",
                       "30",
                       "--out",
                       make_temp_dir()},
                      std::move(env),
                      180});
}

}  // namespace

TEST_CASE("rd and rhd over shared memory with 1 to 8 local ranks", "[mp][recursive][shm]") {
  for (int np : {1, 2, 3, 4, 5, 7, 8}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_recursive(np, sizes_for(np, 4), "float", "sum");
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      const auto doc = load_run_results(r);
      check_all_rows_verified(doc, kSizes * kAlgos * kPlacements);
      CHECK(doc.at("job").at("ranks").get<int>() == np);
    }
  }
}

TEST_CASE("rd and rhd over UCX tcp with 2 3 and 5 local ranks", "[mp][recursive][tcp]") {
  for (int np : {2, 3, 5}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_recursive(np, sizes_for(np, 4), "float", "sum", {{"UCX_TLS", "tcp"}});
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      const auto doc = load_run_results(r);
      check_all_rows_verified(doc, kSizes * kAlgos * kPlacements);
      const std::string t = doc.at("environment").at("transports").at("1->0").get<std::string>();
      INFO(t);
      CHECK(t.find("tcp/") != std::string::npos);
    }
  }
}

TEST_CASE("rd and rhd verify every type and op in and out of place", "[mp][recursive][types]") {
  SECTION("shared memory, 3 ranks (pre/post step)") {
    const auto r = run_recursive(3, type_sweep_sizes("0,8,16,8008"), "all", "all");
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 5 * 6 * 3 * kAlgos * kPlacements);
  }
  SECTION("shared memory, 4 ranks") {
    const auto r = run_recursive(4, "8,24,8008", "all", "all");
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 3 * 6 * 3 * kAlgos * kPlacements);
  }
  SECTION("tcp, 2 ranks") {
    const auto r = run_recursive(2, type_sweep_sizes("8,8008"), "all", "all", {{"UCX_TLS", "tcp"}});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 3 * 6 * 3 * kAlgos * kPlacements);
  }
}

TEST_CASE("rhd with small chunks keeps many pieces in flight", "[mp][recursive][chunk]") {
  // 4 KiB pieces: hundreds per step, bounded in flight; 3 bytes: one element per piece, less
  // than a double (the scratch slots must still hold one element).
  SECTION("4K chunks, 5 ranks") {
    const auto r = run_recursive(5, "1009,1048584,3145756", "double", "sum", {}, "4K");
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 3 * kAlgos * kPlacements);
  }
  SECTION("3 byte chunks, 3 ranks") {
    const auto r = run_recursive(3, "8,24,8008", "double,half", "max", {}, "3");
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    check_all_rows_verified(load_run_results(r), 3 * 2 * kAlgos * kPlacements);
  }
}

TEST_CASE("rd and rhd complete a 16 MiB all-reduce", "[mp][recursive][large]") {
  const auto r = run_process({{"allreduce", "-A", "rd,rhd", "--np", "2", "--sizes", "16M", "-n",
                               "2", "-w", "1", "--timeout", "30", "--out", make_temp_dir()},
                              {},
                              180});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  check_all_rows_verified(load_run_results(r), kAlgos * kPlacements);
}
