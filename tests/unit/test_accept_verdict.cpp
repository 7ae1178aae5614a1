// Acceptance verdicts (pure): expected rates per link type, absolute and relative tests,
// the culprit host, retests.
#include <catch2/catch.hpp>

#include "ibscope/accept/expected_rate.hpp"
#include "ibscope/accept/link_verdict.hpp"
#include "ibscope/core/error.hpp"

using namespace ibscope;
using namespace ibscope::accept;

namespace {

// All pairs of `hosts` hosts (one rank each) at `gbps`, except links touching `slow_host`.
std::vector<LinkMeasurement> mesh(int hosts, double gbps, double expected, int slow_host = -1,
                                  double slow_gbps = 0) {
  std::vector<LinkMeasurement> links;
  for (int a = 0; a < hosts; ++a) {
    for (int b = a + 1; b < hosts; ++b) {
      const bool slow = a == slow_host || b == slow_host;
      // Small deterministic noise so the MAD is not zero.
      const double noise = 1.0 + 0.002 * ((a * 7 + b * 3) % 5 - 2);
      links.push_back({a, b, "h" + std::to_string(a), "h" + std::to_string(b),
                       (slow ? slow_gbps : gbps) * noise, expected});
    }
  }
  return links;
}

}  // namespace

TEST_CASE("expected payload rates make each link type's overheads explicit") {
  CHECK(payload_efficiency(LinkKind::kTcpShaped, 0) == Approx(1448.0 / 1514.0));
  CHECK(expected_payload_gbps(0.2, LinkKind::kTcpShaped, 0) == Approx(0.0239).epsilon(1e-3));
  CHECK(expected_payload_gbps(1.0, LinkKind::kTcpShaped, 0) == Approx(0.1195).epsilon(1e-3));
  CHECK(payload_efficiency(LinkKind::kTcpEthernet, 0) == Approx(1448.0 / 1538.0));
  CHECK(payload_efficiency(LinkKind::kInfiniBand, 4096) == Approx(4096.0 / 4122.0));
  CHECK(payload_efficiency(LinkKind::kRoceV2, 1024) == Approx(1024.0 / 1106.0));
  CHECK(expected_payload_gbps(400, LinkKind::kInfiniBand, 4096) == Approx(49.68).epsilon(1e-3));
  CHECK(parse_link_kind("roce") == LinkKind::kRoceV2);
  CHECK(to_string(parse_link_kind("tcp-shaped")) == "tcp-shaped");
  CHECK_THROWS_AS(parse_link_kind("ethernet"), UsageError);
}

TEST_CASE("median and MAD") {
  CHECK(median_of({}) == 0);
  CHECK(median_of({3, 1, 2}) == 2);
  CHECK(median_of({4, 1, 3, 2}) == 2.5);
  CHECK(mad_of({1, 2, 3, 4, 100}, 3) == 1);
}

TEST_CASE("an even fabric passes") {
  const auto report = judge_links(mesh(6, 23.5, 23.9), Thresholds{});
  CHECK(report.pass);
  CHECK(report.links.size() == 15);
  CHECK(report.hosts.size() == 6);
  for (const auto& h : report.hosts) CHECK(h.pass);
}

TEST_CASE("one host at a quarter of the rate is the culprit and only its links fail") {
  const auto report = judge_links(mesh(4, 23.5, 23.9, 2, 5.9), Thresholds{});
  CHECK_FALSE(report.pass);
  for (const auto& v : report.links) {
    const bool touches = v.link.rank_a == 2 || v.link.rank_b == 2;
    CHECK(v.pass == !touches);
    if (touches) CHECK_THAT(v.reason, Catch::Contains("of the expected 23.900 GB/s"));
  }
  for (const auto& h : report.hosts) {
    CHECK(h.culprit == (h.host == "h2"));
    CHECK(h.pass == (h.host != "h2"));
  }
  CHECK(suspects(report).size() == 3);
}

TEST_CASE("without an expected rate one slow link is a relative outlier") {
  auto links = mesh(8, 10.0, 0);
  links[5].measured_gbps = 6.0;
  const auto report = judge_links(links, Thresholds{});
  CHECK_FALSE(report.pass);
  int failed = 0;
  for (const auto& v : report.links) {
    if (!v.pass) {
      ++failed;
      CHECK(v.outlier);
      CHECK_FALSE(v.below_expected);
      CHECK_THAT(v.reason, Catch::Contains("below the links' median"));
    }
  }
  CHECK(failed == 1);
  // One bad link does not make either of its hosts a culprit.
  for (const auto& h : report.hosts) CHECK_FALSE(h.culprit);
}

TEST_CASE("a uniformly slow fabric fails the absolute test though no link is an outlier") {
  const auto report = judge_links(mesh(4, 12.0, 23.9), Thresholds{});
  CHECK_FALSE(report.pass);
  for (const auto& v : report.links) {
    CHECK(v.below_expected);
    CHECK_FALSE(v.outlier);
  }
}

TEST_CASE("a retest that measures the link at speed clears it") {
  auto links = mesh(4, 23.5, 23.9);
  links[1].measured_gbps = 3.0;  // one noisy sample
  CHECK_FALSE(judge_links(links, Thresholds{}).pass);
  merge_retest(links, {{links[1].rank_b, links[1].rank_a, "", "", 23.4, 23.9}});
  CHECK(judge_links(links, Thresholds{}).pass);
  merge_retest(links, {{links[1].rank_a, links[1].rank_b, "", "", 1.0, 23.9}});
  CHECK(links[1].measured_gbps == Approx(23.4));  // the better measurement stays
}

TEST_CASE("a link with several times the others' latency fails, retests keep the best latency") {
  auto links = mesh(4, 23.5, 23.9);
  for (auto& l : links) l.latency_us = 50 + l.rank_a;  // 50..52 us
  links[2].latency_us = 400;                           // 8x the median
  const auto report = judge_links(links, Thresholds{});
  CHECK(report.median_latency_us == Approx(50.5).margin(1));
  CHECK_FALSE(report.links[2].pass);
  CHECK(report.links[2].slow_latency);
  CHECK(report.links[2].reason.find("latency 400.0 us") != std::string::npos);
  CHECK(report.links[0].pass);
  // 0 turns the latency test off.
  Thresholds off;
  off.max_latency_ratio = 0;
  CHECK(judge_links(links, off).pass);
  // A retest at normal latency clears it and counts the attempt.
  LinkMeasurement again = links[2];
  again.latency_us = 51;
  merge_retest(links, {again});
  CHECK(links[2].latency_us == 51);
  CHECK(links[2].attempts == 2);
  CHECK(judge_links(links, Thresholds{}).pass);
}
