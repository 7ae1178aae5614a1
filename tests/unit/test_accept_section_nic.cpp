// The console lines of an acceptance run with several ranks per host: a NIC slow with every
// partner on its rail is named once, and the links it explains are not listed one by one.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "accept/section.hpp"

using namespace ibscope::accept;

TEST_CASE("accept section names a slow NIC once instead of its links", "[accept][scale]") {
  // Four hosts x 2 ranks (host-major), every host pair rail to rail; rank 3 (h1, local rank 1)
  // is slow with its three partners, the rest pass.
  std::vector<std::string> hosts_by_rank;
  for (int h = 0; h < 4; ++h) {
    hosts_by_rank.push_back("h" + std::to_string(h));
    hosts_by_rank.push_back("h" + std::to_string(h));
  }
  LinkSet links;
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      for (int rail = 0; rail < 2; ++rail) {
        LinkMeasurement m;
        m.rank_a = 2 * a + rail;
        m.rank_b = 2 * b + rail;
        m.host_a = hosts_by_rank[static_cast<std::size_t>(m.rank_a)];
        m.host_b = hosts_by_rank[static_cast<std::size_t>(m.rank_b)];
        m.expected_gbps = 50;
        m.measured_gbps = m.rank_a == 3 || m.rank_b == 3 ? 20 : 48;
        links.links.push_back(m);
        links.evidence.push_back(LinkEvidence{});
      }
    }
  }
  const AcceptOptions options;
  const Preflight preflight;
  const AcceptReport report = judge_links(links.links, options.thresholds);
  const SectionInputs in{options,       AcceptTransport::kUcx, preflight, links, report, 0,
                         hosts_by_rank, std::nullopt,          nullptr,   0,     nullptr};
  const AcceptResult result = build_section(in);
  CHECK_FALSE(result.pass);
  REQUIRE(result.failures.size() == 1);
  CHECK(result.failures[0].find("NIC h1 local rank 1: all 3 of its links (to 3 hosts) failed") !=
        std::string::npos);
}
