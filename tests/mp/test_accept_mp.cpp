// `ibscope accept` across real processes: verdict and exit status, the straggler named from
// per-rank arrival times, links between emulated hosts judged against an expected rate, usage
// errors, and verbs asked for where there is no RDMA device.

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "emulated_hosts.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// One rank on each of `hosts` emulated hosts (TCP store bootstrap, UCX over TCP on loopback).
std::vector<ProcessResult> run_hosts(int hosts, const std::vector<std::string>& accept_args) {
  std::vector<std::string> args = {"accept", "--transport", "ucx", "--timeout", "30"};
  args.insert(args.end(), accept_args.begin(), accept_args.end());
  return run_emulated_hosts(hosts, args);
}

std::vector<ProcessResult> run_two_hosts(const std::vector<std::string>& accept_args) {
  return run_hosts(2, accept_args);
}

}  // namespace

TEST_CASE("accept names the rank that arrives last at every all-reduce", "[mp][accept]") {
  const std::string dir = make_temp_dir();
  const auto res = run_process({{"accept", "--np", "4", "-A", "ring,rd", "--ar-sizes", "64K",
                                 "--ar-iters", "20", "--out", dir, "--timeout", "30"},
                                {{"IBSCOPE_FAULT_DELAY_RANK", "2:4000"}},
                                180});
  INFO(describe(res));
  CHECK(res.exit_code == 1);
  CHECK(res.out.find("ibscope accept: FAIL") != std::string::npos);
  CHECK(res.out.find("FAIL straggler: rank 2 (") != std::string::npos);
  const auto doc = load_run_results(res);
  const auto& s = doc.at("acceptance").at("stragglers");
  REQUIRE(s.at("straggler").is_object());
  CHECK(s.at("straggler").at("rank") == 2);
  CHECK(s.at("ranks").at(2).at("last_fraction").get<double>() >= 0.75);
  CHECK(s.at("ranks").at(2).at("median_late_us").get<double>() > 3000);
  // Per row, per iteration, every rank's arrival.
  REQUIRE(s.at("rows").size() == 2);
  CHECK(s.at("rows").at(0).at("arrival_us").size() == 20);
  CHECK(s.at("rows").at(0).at("arrival_us").at(0).size() == 4);
  CHECK(doc.at("acceptance").at("allreduce").at("wrong") == 0);
  CHECK_FALSE(doc.at("acceptance").at("pass").get<bool>());
  CHECK(doc.at("complete").get<bool>());
  // The straggler is forged by a test hook: the banner, the verdict and the file say so.
  CHECK(res.out.find("# WARNING: FAULT HOOK IBSCOPE_FAULT_DELAY_RANK=2:4000 (every rank) is set") !=
        std::string::npos);
  CHECK(res.out.find("FAIL fault hook IBSCOPE_FAULT_DELAY_RANK=2:4000 (every rank) is set") !=
        std::string::npos);
  CHECK(doc.at("acceptance").at("fault_hooks") ==
        nlohmann::json::array({"IBSCOPE_FAULT_DELAY_RANK=2:4000 (every rank)"}));
  CHECK(doc.at("environment").at("ibscope_env").at("IBSCOPE_FAULT_DELAY_RANK") == "2:4000");
}

TEST_CASE("accept never passes while a fault hook is set, whatever it measured",
          "[mp][accept][fault_hooks]") {
  // One host, no all-reduce: nothing to fail, so the run passes without the hook. With one
  // (an inert name: any IBSCOPE_FAULT_* variable counts) it fails, naming it, exit 1.
  const std::vector<std::string> args = {"accept",           "--np",      "2",
                                         "--skip-allreduce", "--timeout", "30"};
  auto with_out = [&](const std::string& dir) {
    auto a = args;
    a.insert(a.end(), {"--out", dir});
    return a;
  };
  const auto clean = run_process({with_out(make_temp_dir()), {}, 60});
  INFO(describe(clean));
  REQUIRE(clean.exit_code == 0);
  REQUIRE(clean.out.find("ibscope accept: PASS") != std::string::npos);

  const auto hooked =
      run_process({with_out(make_temp_dir()), {{"IBSCOPE_FAULT_NOT_YET_WRITTEN", "1"}}, 60});
  INFO(describe(hooked));
  CHECK(hooked.exit_code == 1);
  CHECK(hooked.out.find("ibscope accept: FAIL") != std::string::npos);
  CHECK(hooked.out.find("PASS") == std::string::npos);
  CHECK(hooked.out.find("FAIL fault hook IBSCOPE_FAULT_NOT_YET_WRITTEN=1 (every rank) is set") !=
        std::string::npos);
  const auto doc = load_run_results(hooked);
  CHECK_FALSE(doc.at("acceptance").at("pass").get<bool>());
  CHECK(doc.at("acceptance").at("fault_hooks") ==
        nlohmann::json::array({"IBSCOPE_FAULT_NOT_YET_WRITTEN=1 (every rank)"}));
}

TEST_CASE("accept judges the link between two hosts against --expect-gbps", "[mp][accept]") {
  SECTION("a rate loopback TCP cannot reach fails the link and both hosts, exit 1") {
    const auto res = run_two_hosts({"--expect-gbps", "4000", "--link-kind", "tcp", "--bw-size",
                                    "256K", "--bw-iters", "4", "--lat-iters", "50", "--retests",
                                    "1", "--skip-allreduce", "--out", make_temp_dir()});
    INFO(describe(res[0]) << "\n" << describe(res[1]));
    CHECK(res[0].exit_code == 1);
    CHECK(res[1].exit_code == 1);  // every rank returns rank 0's verdict
    CHECK(res[0].out.find("FAIL link rank 0 (emu0) <-> rank 1 (emu1)") != std::string::npos);
    CHECK(res[0].out.find("of the expected") != std::string::npos);
    CHECK(res[0].out.find("best of 2 attempts") != std::string::npos);
    const auto doc = load_run_results(res[0]);
    const auto& a = doc.at("acceptance");
    REQUIRE(a.at("links").size() == 1);
    const auto& l = a.at("links").at(0);
    CHECK_FALSE(l.at("pass").get<bool>());
    CHECK(l.at("attempts") == 2);
    const double expected = 4000 / 8.0 * 1448 / 1538;
    CHECK(l.at("expected_gbps").get<double>() == Approx(expected).epsilon(1e-6));
    CHECK(l.at("gbps_a_to_b").get<double>() > 0);
    CHECK(l.at("gbps_b_to_a").get<double>() > 0);
    CHECK(l.at("latency_us").get<double>() > 0);
    CHECK(a.at("hosts").size() == 2);
    CHECK(a.at("retest_rounds") == 1);
    // Every round of the all-pairs phase is in the p2p rows: latency and both directions.
    CHECK(doc.at("p2p").at("rows").size() >= 3);
  }
  SECTION("a rate it can reach passes, exit 0") {
    const auto res = run_two_hosts({"--expect-gbps", "0.01", "--link-kind", "tcp", "--bw-size",
                                    "256K", "--bw-iters", "4", "--lat-iters", "50",
                                    "--skip-allreduce", "--out", make_temp_dir()});
    INFO(describe(res[0]) << "\n" << describe(res[1]));
    CHECK(res[0].exit_code == 0);
    CHECK(res[1].exit_code == 0);
    CHECK(res[0].out.find("ibscope accept: PASS (1 links between 2 hosts over ucx") !=
          std::string::npos);
    const auto doc = load_run_results(res[0]);
    CHECK(doc.at("acceptance").at("pass").get<bool>());
    CHECK(doc.at("acceptance").at("links").at(0).at("fraction_of_expected").get<double>() > 1);
  }
}

TEST_CASE("accept retests links in rounds where some ranks sit out", "[mp][accept]") {
  // Three hosts, every link far below an impossible rate: each retest round has one pair and
  // one rank sitting out; every rank must still agree on the message tags of every round.
  const auto res = run_hosts(
      3, {"--expect-gbps", "4000", "--link-kind", "tcp", "--bw-size", "64K", "--bw-iters", "2",
          "--lat-iters", "20", "--retests", "2", "--skip-allreduce", "--out", make_temp_dir()});
  for (const auto& r : res) {
    INFO(describe(r));
    CHECK(r.exit_code == 1);
    CHECK_FALSE(r.timed_out);
  }
  const auto doc = load_run_results(res[0]);
  const auto& a = doc.at("acceptance");
  CHECK(a.at("retest_rounds") == 2);
  REQUIRE(a.at("links").size() == 3);
  for (const auto& l : a.at("links")) CHECK(l.at("attempts") == 3);
  CHECK(doc.at("complete").get<bool>());
}

TEST_CASE("accept usage errors exit 2 before any rank starts", "[mp][accept]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"accept", "--transport", "carrier-pigeon"}, "--transport"},
      {{"accept", "--min-fraction", "1.5"}, "--min-fraction 1.5"},
      {{"accept", "--link-kind", "token-ring"}, "--link-kind"},
      {{"accept", "--ar-sizes", "0"}, "--ar-sizes"},
      {{"accept", "-A", "magic"}, "unknown algorithm 'magic'"},
      {{"accept", "--retests", "99"}, "--retests 99"},
  };
  for (const auto& [args, message] : cases) {
    const std::string dir = make_temp_dir();
    auto with_out = args;
    with_out.insert(with_out.end(), {"--out", dir});
    const auto res = run_process({with_out, {}, 30});
    INFO(describe(res));
    CHECK(res.exit_code == 2);
    CHECK(res.err.find(message) != std::string::npos);
    CHECK(results_path(res).empty());
  }
}

TEST_CASE("accept --transport verbs without an RDMA device says so and keeps the file",
          "[mp][accept]") {
  if (host_has_rdma_devices()) return;  // this host has RDMA: the path under test cannot happen
  const auto res = run_process(
      {{"accept", "--np", "2", "--transport", "verbs", "--out", make_temp_dir(), "--timeout", "20"},
       {},
       60});
  INFO(describe(res));
  CHECK(res.exit_code == 1);
  CHECK(res.err.find("--transport verbs: ") != std::string::npos);
  CHECK(res.err.find("no RDMA") != std::string::npos);
  CHECK(res.err.find("--transport ucx") != std::string::npos);
  const auto doc = load_run_results(res);
  CHECK_FALSE(doc.at("complete").get<bool>());
}
