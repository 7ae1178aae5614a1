// accept --baseline across network-namespace hosts (docs/baselines.md): a baseline of 5 short
// accept runs, then one host pair's link shaped 15 % down, to a rate that the line-rate and
// relative tests pass as this test sets them: accept --baseline names that link and only it.

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "common/text_lines.hpp"
#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

namespace {

// Short runs (3 rounds of 4 hosts; 256 KiB x 8 in flight x 8 windows per direction). The
// absolute test at 0.6 of the shaped rate and the relative one at 10 x the MAD spread (floored
// at 2 %: -28 %) pass a link at 0.85, so that only the baseline can see it. Equal links here
// differ by up to ~9 % in one direction (test_netns_accept.cpp), and on a loaded 2-core machine
// an unshaped link measured 0.73 of the shaped rate in both attempts (2026-12-07): hence 0.6,
// two retests (a link fails only when it is slow every time), and baseline runs that may fail
// their own verdict (the baseline's median of 5 runs takes care of one slow run).
std::vector<std::string> baseline_accept_args(const std::string& out) {
  std::vector<std::string> args{"accept", "--transport", "ucx",        "--expect-gbps",
                                "0.2",    "--link-kind", "tcp-shaped", "--skip-allreduce"};
  args.insert(args.end(), {"--bw-size", "256K", "--bw-window", "8", "--bw-iters", "8"});
  args.insert(args.end(), {"--lat-iters", "50", "--timeout", "30", "--min-fraction", "0.6"});
  args.insert(args.end(), {"--mad-k", "10", "--retests", "2", "--out", out});
  return args;
}

}  // namespace

TEST_CASE("netns: accept --baseline names the one link shaped 15 % below its baseline",
          "[netns][accept][baseline]") {
  const auto t0 = std::chrono::steady_clock::now();
  NetnsHosts hosts(4, "200mbit", "nb");
  const std::string out = make_temp_dir();
  std::vector<std::string> runs;
  for (int i = 0; i < 5; ++i) {
    NetnsJob job(hosts, baseline_accept_args(out), 90);
    job.start_all();
    const auto res = job.wait_all();
    for (const auto& p : res) {
      INFO(describe(p));
      REQUIRE((p.exit_code == 0 || p.exit_code == 1));  // a verdict, and a results file
    }
    runs.push_back(results_path(res[0]));
  }
  const std::string baseline = out + "/baseline.json";
  std::vector<std::string> args{"baseline"};
  args.insert(args.end(), runs.begin(), runs.end());
  args.insert(args.end(), {"-o", baseline});
  const auto made = run_cli(args);
  INFO(describe(made));
  REQUIRE(made.exit_code == 0);
  CHECK(made.out.find("from 5 runs") != std::string::npos);
  // Never over an existing file.
  CHECK(run_cli(args).exit_code == 1);

  // h1 -> h3 at 170 Mbit/s: the pair's slower direction, 0.85 of the shaped rate. (Not h1 - h2:
  // that pair measured ~6 % spread over the runs here, twice, whatever the cause: 3 spreads is
  // 18 %, more than the drop; h1 - h3 measured 0.4-0.7 %.)
  hosts.rate_to(1, 3, "170mbit", "200mbit");
  auto judged = baseline_accept_args(out);
  judged.insert(judged.end() - 2, {"--baseline", baseline});
  NetnsJob job(hosts, judged, 90);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 1);
  }
  const auto doc = load_run_results(res[0]);
  const auto& acc = doc["acceptance"];
  CHECK_FALSE(acc["pass"].get<bool>());
  REQUIRE(acc.contains("baseline"));
  CHECK(acc["baseline"]["links_known"] == 6);
  CHECK(acc["baseline"]["links_below"] == 1);
  int failed = 0;
  for (const auto& link : acc["links"]) {
    INFO(link.dump());
    const bool shaped = (link["host_a"] == hosts.host(1) && link["host_b"] == hosts.host(3)) ||
                        (link["host_a"] == hosts.host(3) && link["host_b"] == hosts.host(1));
    CHECK(link["pass"].get<bool>() == !shaped);
    CHECK(link["baseline"]["below"].get<bool>() == shaped);
    CHECK_FALSE(link["below_expected"].get<bool>());  // the line-rate test passed it
    CHECK_FALSE(link["outlier"].get<bool>());
    failed += link["pass"].get<bool>() ? 0 : 1;
  }
  CHECK(failed == 1);
  const std::string console = res[0].out + res[0].err;
  INFO(console);
  const auto named = lines_with(console, "below its baseline");
  REQUIRE(named.size() == 1);
  CHECK(named[0].find(hosts.host(1)) != std::string::npos);
  CHECK(named[0].find(hosts.host(3)) != std::string::npos);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("netns baseline test took " << took_s << " s");
}
