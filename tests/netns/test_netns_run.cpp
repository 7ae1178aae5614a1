// `ibscope run` on emulated hosts: its suite's incast between hosts and congestion test run
// (units are hosts: on one host they are skipped, tests/mp) and land in the results file and
// the HTML report beside it. The sweeps and the loopback (a host's RDMA devices, if any, are
// every namespace's) are skipped: they have tests of their own.

#include <catch2/catch.hpp>
#include <set>

#include "common/text_lines.hpp"
#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

TEST_CASE("netns: ibscope run on 4 hosts records an incast and a congestion result",
          "[netns][run]") {
  NetnsHosts hosts(4, "500mbit", "nru");
  const std::string out = make_temp_dir();
  NetnsJob job(hosts,
               {"run", "--skip-p2p", "--skip-allreduce", "--skip-alltoall", "--skip-model",
                "--skip-loopback", "--timeout", "30", "--out", out},
               120);
  job.start_all();
  const auto res = job.wait_all();
  for (std::size_t rank = 0; rank < res.size(); ++rank) {
    INFO("rank " << rank << ": " << describe(res[rank]));
    REQUIRE(res[rank].exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  const std::string console = res[0].out;
  INFO(console);
  // incast:3 (min(hosts - 1, 4)) onto 2 hubs: 2 rounds of 3 flows, their rows in p2p.rows.
  const auto& acc = doc.at("acceptance");
  REQUIRE(acc.at("patterns").size() == 2);
  std::set<std::string> hubs;
  for (const auto& round : acc.at("patterns")) {
    INFO(round.dump());
    CHECK(round.at("pattern") == "incast:3");
    CHECK(round.at("flows").size() == 3);
    CHECK(round.at("aggregate_gbps").get<double>() > 0);
    // The hub's link carries at most its rate: +15 % for the tbf bucket and the timing of
    // flows this short (10.5 MB each; 1.066 x seen in 1 of 4 runs).
    CHECK(round.at("aggregate_gbps").get<double>() < tcp_goodput_gbps(500) * 1.15);
    hubs.insert(round.at("hub_host").get<std::string>());
  }
  CHECK(hubs.size() == 2);
  CHECK(doc.at("p2p").at("rows").size() == 6);
  // Victims on 2 hosts, congestors on the other 2, the incast congestor: 4 impacts.
  const auto& c = acc.at("congestion");
  INFO(c.dump());
  CHECK(c.at("victim_hosts").size() == 2);
  CHECK(c.at("congestor_ranks") == 2);
  CHECK(c.at("impacts").size() == 4);
  CHECK(c.at("loads").at(0).at("rounds").get<int>() > 0);
  CHECK(lines_with(console, "# pattern incast:3 round ").size() == 2);
  CHECK(lines_with(console, "# congestion: ").size() >= 1);
  // And the report beside the results file shows both.
  std::string page = results_path(res[0]);
  page.replace(page.size() - 5, 5, ".html");
  const std::string html = read_text_file(page);
  CHECK(html.find("data-section=\"patterns\"") != std::string::npos);
  CHECK(html.find("data-section=\"congestion\"") != std::string::npos);
  CHECK(html.find("<td>incast:3</td>") != std::string::npos);
}
