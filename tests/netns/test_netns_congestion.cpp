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
  CHECK(impact.at("latency_p50_us") > 2);
  CHECK(impact.at("busbw_gbps") > 1.5);
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
  // noise (one quiet run: 2.96); the tail limit is lifted so that the verdict is the p50's and
  // the busbw's.
  auto args = congestion_args(out, "0,1");
  args.insert(args.end() - 2, {"--max-congestion-tail-impact", "100"});
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
  CHECK(impact.at("latency_p50_us") < 2);
  CHECK(c.at("loads").at(0).at("rounds").get<int>() >= 2);
}
