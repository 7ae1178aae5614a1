// Issue 23: a rank connects only the peers it talks to. The real binary over UCX shared memory,
// with IBSCOPE_LOG_LEVEL=debug so that each rank's Comm says, at its clean close, which peers it
// has endpoints to. Every row is still verified.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "collective_checks.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// rank -> the peers its "UCX endpoints: connected N of M peers (a,b,...)" line names.
std::map<int, std::set<int>> connected_peers(const std::string& err) {
  std::map<int, std::set<int>> out;
  const std::regex line(
      R"(ibscope\[rank (\d+) [^\]]*\]: debug: UCX endpoints: connected (\d+) of (\d+) peers \(([0-9,]*)\))");
  for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it) {
    std::set<int> peers;
    std::stringstream list((*it)[4].str());
    for (std::string p; std::getline(list, p, ',');) peers.insert(std::stoi(p));
    out[std::stoi((*it)[1].str())] = peers;
  }
  return out;
}

ProcessResult run_np(int np, const std::string& algorithm) {
  return run_process({{"allreduce", "-A", algorithm, "--np", std::to_string(np), "--sizes", "8,64K",
                       "-n", "2", "-w", "1", "--timeout", "30", "--out", make_temp_dir()},
                      {{"IBSCOPE_LOG_LEVEL", "debug"}, {"UCX_TLS", "sm,self"}},
                      120});
}

}  // namespace

TEST_CASE("a ring connects each rank to its two neighbours only", "[mp][scale]") {
  constexpr int kNp = 6;
  const auto r = run_np(kNp, "ring");
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  check_all_rows_verified(load_run_results(r), 2 * 2);
  const auto peers = connected_peers(r.err);
  REQUIRE(peers.size() == static_cast<std::size_t>(kNp));
  for (const auto& [rank, set] : peers) {
    INFO("rank " << rank);
    CHECK(set == std::set<int>{(rank + 1) % kNp, (rank + kNp - 1) % kNp});
  }
}

TEST_CASE("a tree connects parents and children and the ring neighbours of the banner only",
          "[mp][scale]") {
  constexpr int kNp = 8;
  const auto r = run_np(kNp, "tree");
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  check_all_rows_verified(load_run_results(r), 2 * 2);
  const auto peers = connected_peers(r.err);
  REQUIRE(peers.size() == static_cast<std::size_t>(kNp));
  std::size_t total = 0;
  for (const auto& [rank, set] : peers) {
    INFO("rank " << rank);
    // Ring neighbours (the banner's transports) plus at most a parent and two children.
    CHECK(set.size() <= 5);
    CHECK(set.count((rank + 1) % kNp) == 1);
    total += set.size();
  }
  // Far from all pairs (8 x 7 = 56 endpoints).
  CHECK(total < 40);
}
