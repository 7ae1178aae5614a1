// The model against a real run: tiers fitted from all-reduce runs on 2 and 3 hosts predict a
// 4-host run (issue 6: within 10 %). Links shaped to 200 Mbit/s (tests/netns/README.md).

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

namespace {

// One ring all-reduce sweep on hosts 0..ranks-1; returns its results file.
std::string ring_sweep(const NetnsHosts& hosts, int ranks, const std::string& out) {
  // 128 KiB .. 1 MiB: above the tbf bucket (256 KB refills between iterations and makes
  // smaller sizes faster than the rate) and within the range where 2 hosts stream at the rate.
  NetnsJob job(hosts,
               {"allreduce", "-A", "ring", "-b", "128K", "-e", "1M", "-f", "2", "-n", "5", "-w",
                "1", "--timeout", "30", "--out", out, "-q"},
               120, ranks);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  const std::string path = results_path(res[0]);
  REQUIRE(!path.empty());
  return path;
}

}  // namespace

TEST_CASE("netns: predict fitted on 2 and 3 hosts matches a real 4-host all-reduce within 10 %",
          "[netns][model]") {
  NetnsHosts hosts(4, "200mbit", "nm");
  const std::string out = make_temp_dir();
  const std::string r2 = ring_sweep(hosts, 2, out);
  const std::string r3 = ring_sweep(hosts, 3, out);
  const std::string r4 = ring_sweep(hosts, 4, out);
  const std::string json = out + "/predict.json";
  const auto p = run_process({{"predict", "--fit", r2, r3, "--nodes", "4", "--sizes",
                               "128K,256K,512K,1M", "--compare", r4, "--tolerance", "10",
                               "--json", json},
                              {},
                              30,
                              ""});
  INFO(describe(p));
  CHECK(p.exit_code == 0);
  std::ifstream in(json);
  REQUIRE(in);
  const auto doc = nlohmann::json::parse(in);
  // The fitted link is the shaped one: TCP payload at 200 Mbit/s is 23.91 MB/s.
  const double bw = doc["tiers"][0]["inter"]["bw_gbps"].get<double>();
  CHECK(bw > 0.0239 * 0.9);
  CHECK(bw < 0.0239 * 1.05);
  int compared = 0;
  for (const auto& row : doc["rows"]) {
    REQUIRE(row["measured_us"].is_number());
    INFO(row.dump());
    CHECK(std::abs(row["error_pct"].get<double>()) <= 10.0);
    ++compared;
  }
  CHECK(compared == 4);
}
