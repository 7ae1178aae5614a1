// `ibscope compare` between two runs of the same p2p command across namespace hosts, the
// second with one host's link shaped to half: the comparison names that host's links as
// regressions and only them (issue 39).

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "mp/process.hpp"
#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

namespace {

/// The results file of one p2p bandwidth run over every pair of `hosts`.
std::string compare_p2p_run(const NetnsHosts& hosts, const std::string& out) {
  // 8 x 1 MiB per window (0.35 s at 200 Mbit/s): the tbf bucket is under 4 % of a window.
  NetnsJob job(hosts, {"p2p",      "--tests",   "bw",         "-b",    "1M", "-e", "1M",
                       "--window", "8",         "--bw-iters", "4",     "-w", "1",  "--pairs",
                       "all",      "--timeout", "30",         "--out", out,  "-q"},
               120);
  job.start_all();
  const auto res = job.wait_all();
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  return results_path(res[0]);
}

}  // namespace

TEST_CASE("netns: compare of a run with one host's link shaped to half names that host's links",
          "[netns][compare]") {
  NetnsHosts hosts(3, "200mbit", "cmp");
  const std::string a = compare_p2p_run(hosts, make_temp_dir());
  hosts.rate(2, "100mbit");
  const std::string b = compare_p2p_run(hosts, make_temp_dir());
  const auto r = run_cli({"compare", a, b, "--threshold", "20"});
  INFO(describe(r));
  // A regression beyond the threshold: exit 1.
  CHECK(r.exit_code == 1);
  const std::string shaped = hosts.host(2);
  int slower = 0, rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("p2p/bw/", 0) != 0) continue;  // the table's rows
    ++rows;
    INFO(line);
    const bool crosses = line.find(shaped) != std::string::npos;
    const bool regression = line.find("SLOWER") != std::string::npos;
    // Half the rate: about twice the time on the links into and out of the shaped host, the
    // others within the noise band or under the threshold.
    CHECK(regression == crosses);
    slower += regression ? 1 : 0;
  }
  CHECK(rows == 3);    // every pair of 3 hosts
  CHECK(slower == 2);  // h0-h2 and h1-h2
}
