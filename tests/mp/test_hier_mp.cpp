// Multi-process hierarchical all-reduce (-A hier): the real binary, local ranks reading each
// other's buffers in place through POSIX shared memory, and between emulated hosts a ring per
// rail over UCX tcp. Every row verified (#wrong == 0); a placement hier cannot use is refused on
// every rank; a local peer that dies or stops ends the others in time, naming it, and leaves
// nothing in /dev/shm. p2p through the same arena (--local-path shm) at the end.

#include <fmt/format.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "collective_checks.hpp"
#include "emulated_hosts.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

constexpr std::size_t kHierSizes = 6;
constexpr std::size_t kHierPlacements = 2;

std::vector<std::string> hier_args(const std::string& sizes, const std::string& type,
                                   const std::string& op, const std::string& out) {
  return {"allreduce", "-A", "hier", "--sizes", sizes,       "-d", type,    "-o", op,
          "-n",        "2",  "-w",   "1",       "--timeout", "30", "--out", out};
}

ProcessResult run_local(int np, const std::string& sizes, const std::string& type = "float",
                        const std::string& op = "sum") {
  auto args = hier_args(sizes, type, op, make_temp_dir());
  args.insert(args.begin() + 1, {"--np", std::to_string(np)});
  return run_process({args, {}, 180});
}

// This run's segments are unlinked once mapped: none may be left, whatever happened.
std::vector<std::string> arena_segments_left() {
  static const std::regex kArenaName("ibscope-[0-9a-f]{16}-r[0-9]+-[0-9]+");
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, kArenaName)) left.push_back(name);
  }
  return left;
}

// Starts a long 3-rank hier run and returns the job and the pid of rank 1 once it measures.
std::pair<Running, int> start_long_run_and_find_rank1(const std::string& timeout_s) {
  Running job = start_process({{"allreduce", "-A", "hier", "--np", "3", "--sizes", "1M", "-n",
                                "1000000", "--timeout", timeout_s, "--out", make_temp_dir()},
                               {},
                               90});
  const int victim = rank_pid(job, 1);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // well into the timed iterations
  return {std::move(job), victim};
}

}  // namespace

TEST_CASE("hier over shared memory with 1 to 8 local ranks", "[mp][hier][shm]") {
  for (int np : {1, 2, 3, 5, 8}) {
    DYNAMIC_SECTION("np " << np) {
      const auto r = run_local(np, sizes_for(np, 4, 64 * 1024));
      INFO(describe(r));
      REQUIRE(r.exit_code == 0);
      const auto doc = load_run_results(r);
      check_all_rows_verified(doc, kHierSizes * kHierPlacements);
      for (const auto& row : doc.at("collectives").at("rows")) CHECK(row.at("algorithm") == "hier");
    }
  }
  CHECK(arena_segments_left().empty());
}

TEST_CASE("hier verifies every type and op in and out of place", "[mp][hier][types]") {
  const auto r = run_local(3, "0,8,16,8008,1048584", "all", "all");
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto doc = load_run_results(r);
  const auto& rows = doc.at("collectives").at("rows");
  CHECK(rows.size() > 5 * kHierPlacements * 8);  // every type and op at 5 sizes
  for (const auto& row : rows) {
    INFO(row.dump());
    CHECK(row.at("wrong").get<int>() == 0);
  }
  CHECK(doc.at("complete").get<bool>());
}

TEST_CASE("hier between emulated hosts: a ring per rail, every row verified", "[mp][hier][hosts]") {
  for (const auto& hosts : std::vector<std::vector<std::string>>{
           {"emu0", "emu0", "emu1", "emu1"}, {"emu0", "emu0", "emu0", "emu1", "emu1", "emu1"}}) {
    DYNAMIC_SECTION(hosts.size() << " ranks") {
      const int p = static_cast<int>(hosts.size());
      auto args = hier_args(sizes_for(p, 4, 64 * 1024), "float", "sum", make_temp_dir());
      args.insert(args.end(), {"--chunk", "64K"});
      const auto res = run_emulated_ranks(hosts, args, 180);
      for (const auto& r : res) {
        INFO(describe(r));
        REQUIRE(r.exit_code == 0);
      }
      const auto doc = load_run_results(res[0]);
      check_all_rows_verified(doc, kHierSizes * kHierPlacements);
      CHECK(doc.at("job").at("hosts") == nlohmann::json(hosts));  // by rank
    }
  }
}

TEST_CASE("hier refuses ranks not placed in blocks per host, on every rank", "[mp][hier][hosts]") {
  const auto res = run_emulated_ranks({"emu0", "emu1", "emu0", "emu1"},
                                      hier_args("1K", "float", "sum", make_temp_dir()), 60);
  for (const auto& r : res) {
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("placed in blocks") != std::string::npos);
    CHECK(r.err.find("rank 1 (emu1)") != std::string::npos);  // the first offender
  }
}

TEST_CASE("a local rank killed during hier ends the others in time, naming it",
          "[mp][hier][faults]") {
  auto [job, victim] = start_long_run_and_find_rank1("30");
  REQUIRE(victim > 0);
  const auto [res, after_kill_s] = kill_rank_and_wait(job, victim);
  INFO(describe(res));
  CHECK(!res.timed_out);
  CHECK(res.exit_code == 1);
  CHECK(after_kill_s < 15);  // well within --timeout 30
  CHECK(res.err.find("killed by signal 9") != std::string::npos);
  CHECK(res.err.find("ibscope[rank 0") != std::string::npos);
  CHECK(res.err.find("rank 1 (") != std::string::npos);
  CHECK(arena_segments_left().empty());
}

TEST_CASE("a local rank stopped (SIGSTOP) during hier ends the others at the timeout, naming it",
          "[mp][hier][faults]") {
  // Ranks started directly (no launcher, which would wait for the stopped rank before ending
  // the job), three on one emulated host.
  auto ranks = start_emulated_ranks({"emu0", "emu0", "emu0"},
                                    {"allreduce", "-A", "hier", "--sizes", "1M", "-n", "1000000",
                                     "--timeout", "3", "--out", make_temp_dir()},
                                    60);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // into the timed iterations
  ::kill(ranks[1].pid, SIGSTOP);
  for (int r : {0, 2}) {
    const auto res = wait_process(ranks[static_cast<std::size_t>(r)]);
    INFO(describe(res));
    CHECK(!res.timed_out);
    CHECK(res.exit_code == 1);
    CHECK(res.err.find("allreduce hier") != std::string::npos);
    CHECK(res.err.find("waited 3 s for rank 1 (emu0)") != std::string::npos);
  }
  ::kill(ranks[1].pid, SIGKILL);
  wait_process(ranks[1]);
  CHECK(arena_segments_left().empty());
}

// ---- p2p through the same arena (--local-path shm) ------------------------------------------

TEST_CASE("p2p --local-path shm: pairs on one host through the arena and across hosts by UCX",
          "[mp][hier][p2p]") {
  // 2 emulated hosts x 2 ranks: pairs (0,1) and (2,3) share a host, the other four cross.
  const auto res = run_emulated_ranks(
      {"emu0", "emu0", "emu1", "emu1"},
      {"p2p", "--local-path", "shm", "-b", "8", "-e", "32K", "-f", "4096", "-n", "20", "--bw-iters",
       "3", "-w", "2", "--timeout", "30", "--out", make_temp_dir()},
      120);
  for (const auto& r : res) {
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const auto& rows = doc.at("p2p").at("rows");
  REQUIRE(rows.size() == 6 * 3 * 2);  // pairs x tests x sizes
  int through_arena = 0;
  for (const auto& row : rows) {
    INFO(row.dump());
    const bool same_host = row.at("host_a") == row.at("host_b");
    const bool arena = row.at("transports").get<std::string>().find("intra-host shm") == 0;
    CHECK(arena == same_host);
    through_arena += arena ? 1 : 0;
    CHECK(row.at("time_us").at("n").get<int>() > 0);
    CHECK(row.at("time_us").at("p50").get<double>() > 0);
    if (row.at("test") != "latency") CHECK(row.at("bw_gbps").get<double>() > 0);
  }
  CHECK(through_arena == 2 * 3 * 2);
  CHECK(arena_segments_left().empty());
}

TEST_CASE("p2p --local-path mistakes are usage errors before any rank starts",
          "[mp][hier][p2p][cli]") {
  // Host memory staged through bounce buffers is not the arena's plain host memory (and works
  // in a build without CUDA, where --mem cuda is refused before this check).
  const auto staged =
      run_cli({"p2p", "--np", "2", "--local-path", "shm", "--mem-path", "staged"}, 30);
  INFO(describe(staged));
  CHECK(staged.exit_code == 2);
  CHECK(staged.err.find("--local-path shm: host memory only") != std::string::npos);
  const auto bad = run_cli({"p2p", "--np", "2", "--local-path", "tcp"}, 30);
  INFO(describe(bad));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--local-path: 'tcp' is not one of: ucx, shm") != std::string::npos);
}

TEST_CASE("a local rank killed during p2p through the arena ends its partner in time, naming it",
          "[mp][hier][p2p][faults]") {
  Running job =
      start_process({{"p2p", "--np", "2", "--local-path", "shm", "-b", "1M", "-e", "1M", "--tests",
                      "latency", "-n", "1000000", "--timeout", "30", "--out", make_temp_dir()},
                     {},
                     90});
  const int victim = rank_pid(job, 1);
  REQUIRE(victim > 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // into the timed round trips
  const auto [res, after_kill_s] = kill_rank_and_wait(job, victim);
  INFO(describe(res));
  CHECK(!res.timed_out);
  CHECK(res.exit_code == 1);
  CHECK(after_kill_s < 15);  // well within --timeout 30
  CHECK(res.err.find("ibscope[rank 0") != std::string::npos);
  CHECK(res.err.find("rank 1 (") != std::string::npos);
  CHECK(arena_segments_left().empty());
}
