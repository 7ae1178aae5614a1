// ibscope accept across network-namespace hosts whose links are shaped to known rates: equal
// links pass; a host shaped to a quarter is the culprit, its links and only its links fail.

#include <catch2/catch.hpp>
#include <set>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

namespace {

std::vector<std::string> accept_args(const std::string& out) {
  return {"accept",     "--transport",
          "ucx",        "--expect-gbps",
          "0.2",        "--link-kind",
          "tcp-shaped", "--bw-size",
          "256K",       "--bw-window",
          "8",          "--bw-iters",
          "6",          "--skip-allreduce",
          "--timeout",  "30",
          "--out",      out};
}

}  // namespace

TEST_CASE("netns: accept passes hosts whose links are all equal", "[netns][accept]") {
  NetnsHosts hosts(4, "200mbit", "na");
  const std::string out = make_temp_dir();
  // Equal links here still differ by up to ~9 % in one direction (TCP over tbf on a 2-core VM;
  // one pair measured 0.914 of the shaped rate in all 3 attempts with nothing else running),
  // which the default band, median - 3 x 1.4826 x MAD with the MAD floored at 2 % (-8.9 %),
  // calls an outlier. The test widens the band to -14 % (--mad-k 7: with a MAD under the 2 %
  // floor the band is k x 2 %; -10 % at k 5 failed on 2026-12-06 when one direction measured
  // 0.875 of the links' median in all 3 attempts); the quarter-rate host below is judged with
  // the default.
  // The absolute test too: one direction of an equal link measured 0.85 of the shaped rate in
  // all 3 attempts in a full-suite run here (2026-12-05), so 0.8 (the srun variant's band).
  auto args = accept_args(out);
  args.insert(args.end() - 2, {"--mad-k", "7", "--min-fraction", "0.8"});
  NetnsJob job(hosts, args, 150);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const auto& acc = doc["acceptance"];
  CHECK(acc["pass"].get<bool>());
  CHECK(acc["links"].size() == 6);
  for (const auto& link : acc["links"]) {
    INFO(link.dump());
    CHECK(link["pass"].get<bool>());
  }
}

TEST_CASE("netns: accept names the host shaped to a quarter and only its links",
          "[netns][accept]") {
  NetnsHosts hosts(4, "200mbit", "nq");
  hosts.rate(2, "50mbit");
  const std::string out = make_temp_dir();
  // One retest, not two: the slow host's three links share it, so each retest round measures
  // them one after another at a quarter of the rate (about 16 s per round).
  auto args = accept_args(out);
  args.insert(args.end() - 2, {"--retests", "1"});
  NetnsJob job(hosts, args, 150);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 1);
  }
  const auto doc = load_run_results(res[0]);
  const auto& acc = doc["acceptance"];
  CHECK_FALSE(acc["pass"].get<bool>());
  const std::string slow = hosts.host(2);
  int failed = 0;
  for (const auto& link : acc["links"]) {
    INFO(link.dump());
    const bool touches_slow = link["host_a"] == slow || link["host_b"] == slow;
    CHECK(link["pass"].get<bool>() == !touches_slow);
    failed += link["pass"].get<bool>() ? 0 : 1;
  }
  CHECK(failed == 3);
  std::set<std::string> failed_hosts, culprits;
  for (const auto& h : acc["hosts"]) {
    INFO(h.dump());
    if (!h["pass"].get<bool>()) failed_hosts.insert(h["host"].get<std::string>());
    if (h["culprit"].get<bool>()) culprits.insert(h["host"].get<std::string>());
  }
  CHECK(failed_hosts == std::set<std::string>{slow});
  CHECK(culprits == std::set<std::string>{slow});
  // The console summary (rank 0) names the culprit host.
  const std::string console = res[0].out + res[0].err;
  INFO(console);
  CHECK(console.find("ibscope accept: FAIL") != std::string::npos);
  CHECK(lines_with(console, "FAIL host " + slow + ":").size() == 1);
}
