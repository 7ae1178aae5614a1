// Measurements across network-namespace hosts against a known ground truth: links shaped with
// tbf, whose TCP payload rate is rate x 1448/1514 (tests/netns/README.md).

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

TEST_CASE("netns: p2p bandwidth between every host pair matches the shaped TCP goodput",
          "[netns][measure]") {
  NetnsHosts hosts(4, "200mbit", "ng");
  const std::string out = make_temp_dir();
  // 16 x 1 MiB per window (16 MiB, 0.7 s at 23.9 MB/s): the tbf bucket (256 KB), which refills
  // between windows, is then under 2 % of a window.
  NetnsJob job(hosts, {"p2p",      "--tests",   "bw",         "-b",    "1M", "-e", "1M",
                       "--window", "16",        "--bw-iters", "5",     "-w", "2",  "--pairs",
                       "all",      "--timeout", "30",         "--out", out,  "-q"},
               150);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const double truth = tcp_goodput_gbps(200);  // 0.02391 GB/s
  int pairs = 0;
  for (const auto& row : doc["p2p"]["rows"]) {
    if (row["test"] != "bw" || row["size_bytes"].get<double>() < 1 << 20) continue;
    ++pairs;
    const double bw = row["bw_gbps"].get<double>();
    const double peak = row["peak_bw_gbps"].get<double>();
    INFO(row["host_a"].get<std::string>()
         << " -> " << row["host_b"].get<std::string>() << ": " << bw * 1e3 << " MB/s (best window "
         << peak * 1e3 << "), ground truth " << truth * 1e3);
    // Never above the shaped rate (+5 % for the bucket and rounding): a figure above it would be
    // a wrong measurement. Below it, the 4 namespaces share 2 CPUs: a descheduled window costs
    // the mean several percent (93-94 % of the truth in CI's run of 5d6f2e5; 83-90 % for the
    // three pairs into one host in a run here with nothing else running). So the best window
    // must reach 90 % and the mean 80 %: a host shaped to another rate (accept's test shapes
    // one to a quarter) or a unit slip is still far outside.
    CHECK(peak > truth * 0.90);
    CHECK(peak < truth * 1.05);
    CHECK(bw > truth * 0.80);
    CHECK(bw <= peak);
  }
  CHECK(pairs == 6);  // every pair of 4 hosts
}

TEST_CASE("netns: a 2 s outage during a long all-reduce is a stall, not a failure",
          "[netns][measure][stall]") {
  NetnsHosts hosts(4, "200mbit", "no");
  const std::string out = make_temp_dir();
  // 1 MiB ring all-reduce: ~65 ms per iteration at 200 Mbit, 200 iterations: ~13 s. TCP resumes
  // at its next retransmission after the link returns: 3.4 s in runs here, but one CI run (on
  // 42848e6) had ranks 2 and 3 still waiting on each other after 20 s, so the timeout leaves
  // room for a backed-off retransmission timer; the stall is still judged against the median.
  NetnsJob job(
      hosts,
      {"allreduce", "--sizes", "1M", "-n", "200", "-w", "2", "--timeout", "45", "--out", out, "-q"},
      150);
  job.start_all();
  std::this_thread::sleep_for(std::chrono::seconds(6));
  hosts.link(2, false);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  hosts.link(2, true);
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    CHECK(p.exit_code == 0);
  }
  INFO(describe(res[0]));
  const auto doc = load_run_results(res[0]);
  CHECK(doc["complete"].get<bool>());
  // Rows of the one size (out-of-place and in-place, as nccl-tests); the outage falls in one.
  const auto& rows = doc["collectives"]["rows"];
  REQUIRE(!rows.empty());
  bool long_one = false;
  for (const auto& row : rows) {
    INFO(row.dump());
    CHECK(row["size_bytes"].get<double>() == 1 << 20);
    if (!row.contains("stalls")) continue;
    for (const auto& s : row["stalls"]) {
      CHECK(s["time_us"].get<double>() > 10 * s["median_us"].get<double>());
      if (s["time_us"].get<double>() > 1.5e6) long_one = true;  // the 2 s outage, give or take
    }
  }
  CHECK(long_one);
  CHECK_FALSE(lines_with(res[0].err, "warning: stall:").empty());
}

namespace {

// Runs `args` (an `ibscope` collective sweep, with its --out) as 2 ranks on each of `hosts`,
// checks that every rank ended well and every row is verified and complete; its rows by
// algorithm.
std::map<std::string, int> verified_rows_by_algorithm(const NetnsHosts& hosts,
                                                      const std::vector<std::string>& args) {
  NetnsJob job(hosts, args, 120, 0, 2);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  CHECK(doc["complete"].get<bool>());
  std::map<std::string, int> rows;
  for (const auto& row : doc["collectives"]["rows"]) {
    INFO(row.dump());
    CHECK(row["wrong"].get<int>() == 0);
    CHECK(row["ranks"].get<int>() == 8);
    ++rows[row["algorithm"].get<std::string>()];
  }
  return rows;
}

}  // namespace

TEST_CASE(
    "netns: hier across 4 hosts x 2 ranks verifies every row beside the flat algorithms "
    "(all-reduce, all-to-all-v)",
    "[netns][measure][hier][alltoallv]") {
  NetnsHosts hosts(4, "1gbit", "nh");
  // Local steps in shared memory inside each namespace host, a ring per rail over the shaped
  // links; the flat ring of the same 8 ranks runs beside it. Speed is bench/ring_vs_link.sh's.
  const auto allreduce = verified_rows_by_algorithm(
      hosts, {"allreduce", "-A", "hier,ring", "--sizes", "0,4,1K,65540,1M", "-d", "float,int32",
              "-n", "2", "-w", "1", "--timeout", "30", "--out", make_temp_dir(), "-q"});
  // sizes x types x placements
  CHECK(allreduce == std::map<std::string, int>{{"hier", 5 * 2 * 2}, {"ring", 5 * 2 * 2}});
  // All-to-all-v: each rank gathers its host's zipf-skewed blocks for its rail peers and sends
  // one message per host pair over the shaped links (empty ones, at the small sizes, not sent),
  // beside the flat scattered exchange.
  const auto alltoallv = verified_rows_by_algorithm(
      hosts, {"alltoallv", "-A", "hier,scattered", "--counts", "zipf:1.2:7", "--sizes",
              "0,4,4004,1M", "-d", "float,int32", "-n", "2", "-w", "1", "--timeout", "30", "--out",
              make_temp_dir(), "-q"});
  // sizes x types, out of place only
  CHECK(alltoallv == std::map<std::string, int>{{"hier", 4 * 2}, {"scattered", 4 * 2}});
}
