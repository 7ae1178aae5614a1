// `ibscope accept --congestion` on emulated hosts with shaped links: congestors whose incast
// lands on a link the victims use slow the victims down (impact factor > 1), congestors on
// links of their own do not (impact factor ~ 1).

#include <catch2/catch.hpp>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

namespace {

// Short phases: the all-pairs phase is not what these tests judge (--mad-k 100 and no latency
// ratio keep its verdict out of the way), the congestion phase runs the incast congestor only.
std::vector<std::string> congestion_args(const std::string& out, const std::string& victims) {
  return {"accept",
          "--transport",
          "ucx",
          "--skip-allreduce",
          "--bw-size",
          "64K",
          "--bw-iters",
          "2",
          "--retests",
          "0",
          "--mad-k",
          "100",
          "--max-latency-ratio",
          "0",
          "--lat-iters",
          "30",
          "--congestion",
          "--congestors",
          "incast",
          "--victim-ranks",
          victims,
          "--ar-iters",
          "8",
          "--congestion-ar-size",
          "256K",
          "--congestor-size",
          "256K",
          "--timeout",
          "30",
          "--out",
          out};
}

// The impacts of the section, by metric.
std::map<std::string, double> impacts_of(const nlohmann::json& congestion) {
  std::map<std::string, double> out;
  for (const auto& i : congestion.at("impacts")) {
    out[i.at("metric").get<std::string>()] =
        i.at("impact").is_null() ? -1 : i.at("impact").get<double>();
  }
  return out;
}

}  // namespace

TEST_CASE("netns: congestors whose incast shares the victims' link slow the victims",
          "[netns][accept][congestion]") {
  // 3 hosts x 2 ranks: victims rank 0 (h0) and rank 2 (h1); congestors 1 (h0, the incast
  // target), 3 (h1), 4 and 5 (h2). The incast fills h0's link from the switch, which carries
  // the victims' traffic to rank 0 as well.
  NetnsHosts hosts(3, "100mbit", "nc");
  const std::string out = make_temp_dir();
  NetnsJob job(hosts, congestion_args(out, "0,2"), 120, 0, 2);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 1);  // the congestion verdict fails
  }
  const auto doc = load_run_results(res[0]);
  const auto& c = doc.at("acceptance").at("congestion");
  INFO(c.dump());
  CHECK_FALSE(c.at("pass").get<bool>());
  const auto impact = impacts_of(c);
  // The bandwidth-bound all-reduce and the latency tail feel the full link every run here
  // (busbw 4.3-5.2, p99 2.3-55 in six runs on 2026-12-07); the p50 of 30 ping-pongs of 8 B did
  // not always (0.85-8.2): the TCP incast leaves the shaped queue short now and then, and half
  // the pings can fall into such lulls. It is reported, not asserted.
  CHECK(impact.at("busbw_gbps") > 1.5);
  CHECK(impact.at("latency_p99_us") > 2);
  CHECK(impact.at("tail_busbw_gbps") > 1.5);
  const std::string console = res[0].out + res[0].err;
  INFO(console);
  CHECK(console.find("FAIL congestion: ") != std::string::npos);
}

TEST_CASE("netns: congestors on links of their own leave the victims alone",
          "[netns][accept][congestion]") {
  // 4 hosts x 1 rank: victims on h0 and h1, the incast from h3 into h2.
  NetnsHosts hosts(4, "100mbit", "nd");
  const std::string out = make_temp_dir();
  // The p99 of 30 ping-pongs on a 2-CPU machine shared with the congestors' TCP processing is
  // the slowest one or two: one 2 ms hiccup made it 195 x the isolated 11 us (a run under a
  // parallel build, 2026-12-07). The tail limit is lifted and the p50's raised to 4 (below);
  // the busbw keeps the default 2 and is checked to +-30 %.
  auto args = congestion_args(out, "0,1");
  args.insert(args.end() - 2,
              {"--max-congestion-tail-impact", "1e6", "--max-congestion-impact", "4"});
  NetnsJob job(hosts, args, 120);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const auto& c = doc.at("acceptance").at("congestion");
  INFO(c.dump());
  CHECK(c.at("pass").get<bool>());
  const auto impact = impacts_of(c);
  // Tolerance: the shaped links are the same, but the 2 CPUs are shared with the congestors'
  // TCP processing.
  CHECK(impact.at("busbw_gbps") == Approx(1.0).margin(0.3));
  // The p50 of 8 B ping-pongs (~11 us here) also feels the CPUs the congestors' TCP shares:
  // 0.85-2.4 in five runs; a shared link gave up to 8.2.
  CHECK(impact.at("latency_p50_us") < 4);
  CHECK(c.at("loads").at(0).at("rounds").get<int>() >= 2);
}
