// `ibscope accept --baseline db` as a user runs it: accept runs between two emulated hosts fill
// the history database in their --out folder; a later accept with --baseline db judges the
// link against its own past runs there (docs/baselines.md); a missing history is refused.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "emulated_hosts.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

std::vector<std::string> baseline_db_accept(const std::string& out,
                                            std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"accept",
                                   "--transport",
                                   "ucx",
                                   "--timeout",
                                   "30",
                                   "--bw-size",
                                   "64K",
                                   "--bw-iters",
                                   "4",
                                   "--lat-iters",
                                   "50",
                                   "--retests",
                                   "0",
                                   "--skip-allreduce",
                                   "--no-loopback",
                                   "--out",
                                   out};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("accept --baseline db judges the link against its own runs in the history",
          "[mp][accept][baseline][history]") {
  const std::string dir = make_temp_dir();
  SECTION("no history database yet: refused on rank 0, naming it") {
    const auto r = run_emulated_hosts(2, baseline_db_accept(dir, {"--baseline", "db"}));
    INFO(describe(r[0]));
    REQUIRE(!results_path(r[0]).empty());
    // The history does not exist yet: refused, naming it (exit 2 on rank 0).
    CHECK(r[0].exit_code == 2);
    CHECK(r[0].err.find("ibscope.db") != std::string::npos);
  }
  SECTION("three runs, then a fourth judged against them") {
    for (int i = 0; i < 3; ++i) {
      const auto r = run_emulated_hosts(2, baseline_db_accept(dir));
      INFO(describe(r[0]));
      REQUIRE(!results_path(r[0]).empty());
    }
    const auto r = run_emulated_hosts(2, baseline_db_accept(dir, {"--baseline", "db"}));
    INFO(describe(r[0]));
    REQUIRE(!results_path(r[0]).empty());
    const auto doc = load_run_results(r[0]);
    const auto& b = doc.at("acceptance").at("baseline");
    INFO(b.dump());
    CHECK(b.at("source").get<std::string>().find("ibscope.db") != std::string::npos);
    CHECK(b.at("source").get<std::string>().find("3 runs since") != std::string::npos);
    // The one link between the two hosts is known to its past.
    CHECK(b.at("links_known").get<int>() == 1);
    const auto& link = doc.at("acceptance").at("links").at(0);
    CHECK(link.at("baseline").at("known").get<bool>());
  }
}
