// The HTML report of an acceptance run on many hosts: no rank-by-rank matrix above 64 hosts,
// failures and a row per host first, every link as a CSV download; small runs keep the matrix.

#include <catch2/catch.hpp>
#include <string>

#include "ibscope/output/html_report.hpp"

namespace {

ibscope::output::ReportFile accept_file(int hosts) {
  ibscope::output::ReportFile f;
  f.path = "accept.json";
  f.label = "accept";
  ibscope::results::Acceptance a;
  a.pass = false;
  // A ring of hosts, one rank each; host 1's links fail.
  for (int h = 0; h < hosts; ++h) {
    ibscope::results::AcceptLink l;
    l.rank_a = h;
    l.rank_b = (h + 1) % hosts;
    l.host_a = "node" + std::to_string(h);
    l.host_b = "node" + std::to_string((h + 1) % hosts);
    l.measured_gbps = h == 0 || h == 1 ? 20 : 48;
    l.expected_gbps = 49.68;
    l.fraction_of_expected = l.measured_gbps / l.expected_gbps;
    l.pass = l.measured_gbps > 40;
    l.reason = l.pass ? "" : "slow, \"really\"";
    a.links.push_back(l);
    ibscope::results::AcceptHost host{"node" + std::to_string(h),
                                      2,
                                      h == 1 ? 2 : 0,
                                      h == 1,
                                      h != 1,
                                      h == 1 ? "all 2 of its links failed" : ""};
    a.hosts.push_back(host);
  }
  a.notes = {"pairs random:8 (seed 5; repeat with --pairs random:8 --pairs-seed 5): 8 rounds"};
  f.doc.acceptance = a;
  return f;
}

}  // namespace

TEST_CASE("report: acceptance above 64 hosts lists failures and hosts and links as CSV",
          "[report][accept][scale]") {
  const std::string page = ibscope::output::html_report({accept_file(100)}, {});
  CHECK(page.find("data-chart=\"pairs-bw-1\"") == std::string::npos);  // no heatmap
  CHECK(page.find("100 links between 100 hosts, 2 failed") != std::string::npos);
  CHECK(page.find("pairs random:8 (seed 5;") != std::string::npos);
  CHECK(page.find("<th>failed host</th>") != std::string::npos);
  CHECK(page.find("data:text/csv;base64,") != std::string::npos);
  CHECK(page.find("Every link as CSV (100 rows)") != std::string::npos);
  // Failures first: the failed host's table comes before the per-host table.
  CHECK(page.find("<th>failed host</th>") < page.find("<th>slowest link (GB/s)</th>"));
}

TEST_CASE("report: acceptance on a few hosts keeps the pair matrix", "[report][accept][scale]") {
  const std::string page = ibscope::output::html_report({accept_file(8)}, {});
  CHECK(page.find("data-chart=\"pairs-bw-1\"") != std::string::npos);
  CHECK(page.find("data:text/csv;base64,") == std::string::npos);
}
