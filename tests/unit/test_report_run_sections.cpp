// The HTML report's traffic-pattern and loopback sections, from a results document written and
// read back (results/writer.hpp, results/loader.hpp): each shows its table when the file has
// the data and is left out when it has none.

#include <catch2/catch.hpp>
#include <string>

#include "ibscope/output/html_report.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"

namespace results = ibscope::results;

namespace {

// A document through its JSON text and back: what `ibscope report` reads.
ibscope::output::ReportFile through_file(results::Document doc) {
  doc.command.subcommand = "run";
  ibscope::output::ReportFile f;
  f.path = "run.json";
  f.label = "run";
  f.doc = results::parse(results::to_text(doc), "run.json");
  return f;
}

results::AcceptPattern incast_round() {
  results::AcceptPattern p;
  p.pattern = "incast:3";
  p.round = 1;
  p.hub_host = "node3";
  p.size_bytes = 262144;
  p.flows = {{"node0", "node3", 0.0021}, {"node1", "node3", 0.0019}, {"node2", "node3", 0.0006}};
  p.aggregate_gbps = 0.0046;
  p.expected_gbps = 0.0239;
  p.fairness_jain = 0.79;
  p.pass = false;
  p.reason = "incast:3 onto node3: fairness 0.79 < 0.8";
  return p;
}

results::LoopbackNic slow_nic() {
  return {.host = "node0",
          .nic = "mlx5_1",
          .data_rate_gbyte_s = 50,
          .pcie_gbyte_s = 31.5,
          .path = "NUMA 0 -> pci 0000:17:00.0 (x16, 31.5 GB/s)",
          .size_bytes = 1 << 20,
          .iterations = 400,
          .write_gbyte_s = 12.5,
          .read_gbyte_s = 24,
          .siblings = 3,
          .siblings_write_gbyte_s = 25,
          .siblings_read_gbyte_s = 24,
          .ceiling_gbyte_s = 31.5,
          .failures = {"write 12.5 GB/s is 50 % below its siblings' median 25 GB/s"}};
}

}  // namespace

TEST_CASE("report: the patterns section shows each round's hub, flows, aggregate and Jain",
          "[report][pattern]") {
  results::Document doc;
  results::Acceptance a;
  a.patterns = {incast_round()};
  doc.acceptance = a;
  const std::string page = ibscope::output::html_report({through_file(doc)}, {});
  CHECK(page.find("data-section=\"patterns\"") != std::string::npos);
  CHECK(page.find("<th>Jain&#39;s index</th>") != std::string::npos);
  CHECK(page.find("<td>incast:3</td><td>1</td><td>node3</td><td>262144</td><td>3</td>") !=
        std::string::npos);
  CHECK(page.find("node2-&gt;node3 0.0006") != std::string::npos);
  CHECK(page.find("<td>0.0046</td><td>0.0239</td><td>19.2</td><td>0.790</td>") !=
        std::string::npos);
  CHECK(page.find("FAIL: incast:3 onto node3: fairness 0.79 &lt; 0.8") != std::string::npos);
  // No expected link rate (run's patterns): fairness only, the rate columns say so.
  a.patterns[0].expected_gbps = 0;
  a.patterns[0].pass = true;
  a.patterns[0].reason.clear();
  doc.acceptance = a;
  const std::string relative = ibscope::output::html_report({through_file(doc)}, {});
  CHECK(relative.find("<td>0.0046</td><td>-</td><td>-</td><td>0.790</td><td>PASS</td>") !=
        std::string::npos);
  // Without rounds there is no section.
  doc.acceptance->patterns.clear();
  CHECK(ibscope::output::html_report({through_file(doc)}, {}).find("data-section=\"patterns\"") ==
        std::string::npos);
}

TEST_CASE("report: the loopback section shows each NIC's rates against siblings and ceiling",
          "[report][loopback]") {
  results::Document doc;
  results::Loopback l;
  l.ran = true;
  l.slow_pct = 25;
  l.min_fraction = 0.5;
  l.budget_s = 5;
  l.size_bytes = 1 << 20;
  l.nics = {slow_nic()};
  doc.loopback = l;
  const std::string page = ibscope::output::html_report({through_file(doc)}, {});
  CHECK(page.find("data-section=\"loopback\"") != std::string::npos);
  CHECK(page.find("<td>node0</td><td>mlx5_1:1</td><td>host</td><td>12.5</td><td>24</td>"
                  "<td>-50.0</td><td>+0.0</td><td>50</td><td>31.5</td><td>39.7</td>") !=
        std::string::npos);
  CHECK(page.find("NUMA 0 -&gt; pci 0000:17:00.0 (x16, 31.5 GB/s)") != std::string::npos);
  CHECK(page.find("FAIL; write 12.5 GB/s is 50 % below") != std::string::npos);
  // accept's preflight keeps it under acceptance: the same table.
  results::Document accepted;
  results::AcceptPreflight pre;
  pre.loopback = l;
  results::Acceptance a;
  a.preflight = pre;
  accepted.acceptance = a;
  CHECK(ibscope::output::html_report({through_file(accepted)}, {})
            .find("<td>node0</td><td>mlx5_1:1</td>") != std::string::npos);
  // Skipped (no RDMA device): no section.
  l.nics.clear();
  l.skipped_reason = "no host has an RDMA device with an ACTIVE port";
  doc.loopback = l;
  CHECK(ibscope::output::html_report({through_file(doc)}, {}).find("data-section=\"loopback\"") ==
        std::string::npos);
}
