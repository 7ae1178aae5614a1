// Traffic patterns across network-namespace hosts against the shaping's ground truth
// (rate x 1448/1514 of TCP payload): an incast onto the host shaped down reaches that host's
// rate and no more, shared fairly; bisection between equal hosts moves one link's rate per
// flow; accept's incast onto the shaped host fails on its aggregate and reports the ECN marks
// an emulated switch set at its port as a congestion finding with its share.

#include <catch2/catch.hpp>
#include <set>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

TEST_CASE("netns: p2p incast onto the host shaped down reaches its rate, shared fairly",
          "[netns][pattern]") {
  NetnsHosts hosts(4, "200mbit", "ni");
  hosts.rate(3, "50mbit");
  const std::string out = make_temp_dir();
  // 3 flows x 256 KiB x 8 x 4 (8.4 MB each, 25 MB in all): about 4 s at 6 MB/s.
  NetnsJob job(hosts,
               {"p2p", "--pattern", "incast:3", "--pattern-hubs", "3", "-b", "256K", "-e", "256K",
                "--window", "8", "--bw-iters", "4", "-w", "1", "--timeout", "30", "--out", out},
               120);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const double truth = tcp_goodput_gbps(50);  // 5.98 MB/s into host 3
  const auto& rows = doc["p2p"]["rows"];
  REQUIRE(rows.size() == 3);
  std::set<std::string> senders;
  double sum_gbps = 0;
  for (const auto& row : rows) {
    INFO(row.dump());
    REQUIRE(row.contains("pattern"));
    const auto& p = row["pattern"];
    CHECK(p["name"] == "incast:3");
    CHECK(p["hub_host"] == hosts.host(3));
    CHECK(row["host_b"] == hosts.host(3));
    CHECK(p["flows"] == 3);
    senders.insert(row["host_a"].get<std::string>());
    sum_gbps += row["bw_gbps"].get<double>();
    CHECK_FALSE(row["nic_counters"].empty());
  }
  CHECK(senders == std::set<std::string>{hosts.host(0), hosts.host(1), hosts.host(2)});
  const auto& p = rows[0]["pattern"];
  const double aggregate = p["aggregate_bw_gbps"].get<double>();
  const double jain = p["fairness_jain"].get<double>();
  INFO("aggregate " << aggregate * 1e3 << " MB/s, truth " << truth * 1e3 << " MB/s, flows sum "
                    << sum_gbps * 1e3 << " MB/s, Jain " << jain);
  // The receiver's link is the bottleneck: the aggregate is its rate (the senders' links are 4x
  // faster), never above it (+5 % for the tbf bucket).
  CHECK(aggregate > truth * 0.85);
  CHECK(aggregate < truth * 1.05);
  CHECK(sum_gbps < truth * 1.05 * 1.2);  // each flow ends when its last byte did: sum >= agg
  // TCP shares a tail-drop queue roughly evenly between 3 equal flows.
  CHECK(jain > 0.8);
  CHECK(jain <= 1.0);
  const std::string console = res[0].out;
  INFO(console);
  CHECK(console.find("p2p --pattern incast:3") != std::string::npos);
}

TEST_CASE("netns: p2p bisection between equal hosts moves one link's rate per flow",
          "[netns][pattern]") {
  NetnsHosts hosts(4, "100mbit", "nb");
  const std::string out = make_temp_dir();
  // 4 flows (h0<->h2, h1<->h3) x 256 KiB x 8 x 5 (10.5 MB each): about 1 s at 12 MB/s.
  NetnsJob job(hosts,
               {"p2p", "--pattern", "bisection", "-b", "256K", "-e", "256K", "--window", "8",
                "--bw-iters", "5", "-w", "1", "--timeout", "30", "--out", out},
               120);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const double truth = tcp_goodput_gbps(100);
  const auto& rows = doc["p2p"]["rows"];
  REQUIRE(rows.size() == 4);
  std::set<std::pair<std::string, std::string>> flows;
  for (const auto& row : rows) {
    INFO(row.dump());
    flows.insert({row["host_a"].get<std::string>(), row["host_b"].get<std::string>()});
    CHECK_FALSE(row["pattern"].contains("hub_host"));
    // Each flow has a link of its own in its direction: its rate, not a share of it (the 4
    // namespaces share 2 CPUs, so the floor is loose; a shared link would give half).
    const double bw = row["bw_gbps"].get<double>();
    CHECK(bw > truth * 0.7);
    CHECK(bw < truth * 1.05);
  }
  const std::set<std::pair<std::string, std::string>> expected{{hosts.host(0), hosts.host(2)},
                                                               {hosts.host(2), hosts.host(0)},
                                                               {hosts.host(1), hosts.host(3)},
                                                               {hosts.host(3), hosts.host(1)}};
  CHECK(flows == expected);
  const double aggregate = rows[0]["pattern"]["aggregate_bw_gbps"].get<double>();
  INFO("aggregate " << aggregate * 1e3 << " MB/s, 4 links " << 4 * truth * 1e3 << " MB/s");
  CHECK(aggregate > 4 * truth * 0.7);
  CHECK(aggregate < 4 * truth * 1.05);
}

TEST_CASE("netns: accept's incast onto the shaped host fails it and finds the ECN congestion",
          "[netns][pattern][accept][counters]") {
  NetnsHosts hosts(4, "200mbit", "ne");
  hosts.rate(3, "50mbit");
  hosts.mark_ce(3, 50);  // the switch marks what queues in front of host 3's port
  const std::string out = make_temp_dir();
  // --pairs first: the all-pairs phase measures h0-h1 only (it gives the expected link rate);
  // the pattern phase is what this test is about.
  NetnsJob job(hosts,
               {"accept",
                "--transport",
                "ucx",
                "--expect-gbps",
                "0.2",
                "--link-kind",
                "tcp-shaped",
                "--bw-size",
                "256K",
                "--bw-window",
                "8",
                "--bw-iters",
                "3",
                "--retests",
                "0",
                "--skip-allreduce",
                "--pairs",
                "first",
                "--pattern",
                "incast:3",
                "--pattern-hubs",
                "3",
                "--timeout",
                "30",
                "--out",
                out},
               150);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 1);
  }
  const auto doc = load_run_results(res[0]);
  const auto& acc = doc["acceptance"];
  CHECK_FALSE(acc["pass"].get<bool>());
  REQUIRE(acc.contains("patterns"));
  REQUIRE(acc["patterns"].size() == 1);
  const auto& round = acc["patterns"][0];
  INFO(round.dump());
  const std::string victim = hosts.host(3);
  CHECK(round["hub_host"] == victim);
  CHECK(round["flows"].size() == 3);
  // The receiver's aggregate is its shaped rate, a quarter of the line rate: the round fails,
  // naming the receiver and its flows.
  CHECK_FALSE(round["pass"].get<bool>());
  const double fraction =
      round["aggregate_gbps"].get<double>() / round["expected_gbps"].get<double>();
  // 50 of 200 Mbit/s: 0.24 measured; the floor is loose (one frame per packet costs CPU).
  CHECK(fraction > 0.1);
  CHECK(fraction < 0.3);
  const std::string reason = round["reason"].get<std::string>();
  CHECK(reason.find("incast:3 onto " + victim) != std::string::npos);
  for (int i = 0; i < 3; ++i) {
    CHECK(reason.find(hosts.host(i) + "->" + victim) != std::string::npos);
  }
  // The marks: the receiver counted CE packets (IpExt InCEPkts), a finding with its share.
  const std::string congestion = round.value("congestion", "");
  CHECK(congestion.find(victim + " tcp: ") != std::string::npos);
  CHECK(congestion.find("InCEPkts +") != std::string::npos);
  CHECK(congestion.find("% of events") != std::string::npos);
  CHECK(round["congestion_pct"].get<double>() >= 1.0);
  const std::string console = res[0].out + res[0].err;
  INFO(console);
  CHECK(lines_with(console, "congestion: pattern incast:3 onto " + victim).size() == 1);
  CHECK(lines_with(console, "pattern incast:3 onto " + victim + ", 262144 B: aggregate").size() ==
        1);
}
