// accept --pattern verdicts (pure): the receiver's aggregate against its link, Jain's index
// against --min-fairness, the failure naming the hub and its flows, congestion counters as a
// finding with its share; and the rows and verdicts through the results file and its schema.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ibscope/accept/pattern_verdict.hpp"
#include "ibscope/measure/traffic_pattern.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"

namespace {

using ibscope::fabric::CounterKind;
using ibscope::fabric::CounterSource;

// The rows of one incast round onto "h3" from h0..h2 at these rates (GB/s), 1 s per flow's
// worth of bytes, as p2p --pattern makes them.
std::vector<ibscope::measure::P2pRow> ap_incast_rows(const std::vector<double>& gbps,
                                                     std::uint64_t ce_marks = 0) {
  std::vector<double> bytes, seconds;
  for (double g : gbps) {
    bytes.push_back(1e9);
    seconds.push_back(1.0 / g);
  }
  const auto fig = ibscope::measure::round_figures(bytes, seconds);
  std::vector<ibscope::measure::P2pRow> rows;
  for (std::size_t i = 0; i < gbps.size(); ++i) {
    ibscope::measure::P2pRow r;
    r.test = "bw";
    r.rank_a = static_cast<int>(i);
    r.rank_b = 3;
    r.host_a = "h" + std::to_string(i);
    r.host_b = "h3";
    r.size_bytes = 262144;
    r.bw_gbps = fig.flow_gbps[i];
    r.pattern = ibscope::measure::PatternFlowInfo{.pattern = "incast:3",
                                                  .round = 0,
                                                  .hub_host = "h3",
                                                  .hub_rank = 3,
                                                  .flows = static_cast<int>(gbps.size()),
                                                  .aggregate_bw_gbps = fig.aggregate_gbps,
                                                  .fairness_jain = fig.fairness_jain};
    ibscope::fabric::NicDelta hub;
    hub.host = "h3";
    hub.nic = "tcp";
    hub.driver = "tcp";
    hub.counters.push_back({CounterSource::kTcp, "InSegs", CounterKind::kTraffic, 1000});
    if (ce_marks > 0) {
      hub.counters.push_back({CounterSource::kTcp, "InCEPkts", CounterKind::kCongestion, ce_marks});
    }
    r.nic_counters.push_back(hub);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("accept patterns: an incast that fills its receiver's link fairly passes",
          "[accept][pattern]") {
  const auto v = ibscope::accept::judge_pattern_rows(ap_incast_rows({1, 1, 1}), 3.0, {}, {});
  REQUIRE(v.size() == 1);
  CHECK(v[0].pass);
  CHECK(v[0].hub_host == "h3");
  CHECK(v[0].flows.size() == 3);
  CHECK(v[0].expected_gbps == Approx(3.0));
  CHECK(v[0].aggregate_gbps == Approx(3.0));
  CHECK(v[0].fairness_jain == Approx(1.0));
  CHECK(v[0].reason.empty());
  CHECK(v[0].congestion.empty());
}

TEST_CASE("accept patterns: a slow receiver fails on its aggregate, naming hub and flows",
          "[accept][pattern]") {
  // A receiver that takes a quarter of its line rate.
  const auto v =
      ibscope::accept::judge_pattern_rows(ap_incast_rows({0.25, 0.25, 0.25}), 3.0, {}, {});
  REQUIRE(v.size() == 1);
  CHECK_FALSE(v[0].pass);
  CHECK_THAT(v[0].reason, Catch::StartsWith("incast:3 onto h3, 262144 B: aggregate 0.7500 GB/s "
                                            "is 0.25 of the expected 3.0000 GB/s (min 0.80)"));
  CHECK_THAT(v[0].reason, Catch::Contains("flows h0->h3 0.2500, h1->h3 0.2500, h2->h3 0.2500"));
  // Without a link rate (UCX over TCP, no --expect-gbps) only fairness is judged.
  CHECK(ibscope::accept::judge_pattern_rows(ap_incast_rows({0.25, 0.25, 0.25}), 0, {}, {})[0].pass);
}

TEST_CASE("accept patterns: a starved flow fails on Jain's index", "[accept][pattern]") {
  // 1 + 1 + 0.1: J = 2.1^2 / (3 x 2.01) = 0.731.
  const auto v = ibscope::accept::judge_pattern_rows(ap_incast_rows({1, 1, 0.1}), 0, {}, {});
  REQUIRE(v.size() == 1);
  CHECK(v[0].fairness_jain == Approx(2.1 * 2.1 / (3 * 2.01)));
  CHECK_FALSE(v[0].pass);
  CHECK_THAT(v[0].reason, Catch::Contains("fairness (Jain's index) 0.731 below 0.80"));
  ibscope::accept::PatternThresholds lenient;
  lenient.min_fairness = 0.7;
  CHECK(ibscope::accept::judge_pattern_rows(ap_incast_rows({1, 1, 0.1}), 0, lenient, {})[0].pass);
}

TEST_CASE("accept patterns: ECN marks at the receiver are a congestion finding with its share",
          "[accept][pattern][counters]") {
  // 100 CE marks beside 1,000 segments: 100 / 1,100 = 9.1 % of events.
  const auto v = ibscope::accept::judge_pattern_rows(ap_incast_rows({1, 1, 1}, 100), 3.0, {}, {});
  REQUIRE(v.size() == 1);
  CHECK(v[0].pass);  // congestion never fails a round by itself
  CHECK(v[0].congestion_pct == Approx(100.0 / 1100.0 * 100));
  CHECK_THAT(v[0].congestion, Catch::StartsWith("incast:3 onto h3, 262144 B: h3 tcp: "));
  CHECK_THAT(v[0].congestion, Catch::Contains("InCEPkts +100") && Catch::Contains("9.1 %"));
  // Each host NIC is counted once, though every flow's row carries the hub's counters.
  CHECK(v[0].congestion.find("InCEPkts", v[0].congestion.find("InCEPkts") + 1) ==
        std::string::npos);
}

TEST_CASE("accept patterns: rows and verdicts pass the results schema and read back",
          "[accept][pattern][results]") {
  auto doc = ibscope::results::Document::start("accept", {"ibscope", "accept"});
  auto rows = ap_incast_rows({0.25, 0.25, 0.25}, 10);
  for (auto& r : rows) {
    r.samples_us = {1.0};
    r.time_us = ibscope::measure::summarize(r.samples_us);
    doc.add_row(r);
  }
  doc.acceptance = ibscope::results::Acceptance{};
  doc.acceptance->patterns = ibscope::accept::judge_pattern_rows(rows, 3.0, {}, {});
  const std::string text = ibscope::results::to_text(doc);
  const auto back = ibscope::results::parse(text, "patterns.json");  // validates
  REQUIRE(back.p2p.rows.size() == 3);
  REQUIRE(back.p2p.rows[0].pattern.has_value());
  CHECK(back.p2p.rows[0].pattern->pattern == "incast:3");
  CHECK(back.p2p.rows[0].pattern->hub_host == "h3");
  CHECK(back.p2p.rows[0].pattern->fairness_jain == Approx(1.0));
  REQUIRE(back.acceptance.has_value());
  REQUIRE(back.acceptance->patterns.size() == 1);
  const auto& p = back.acceptance->patterns[0];
  CHECK_FALSE(p.pass);
  CHECK(p.flows.size() == 3);
  CHECK(p.reason == doc.acceptance->patterns[0].reason);
  CHECK(p.congestion == doc.acceptance->patterns[0].congestion);
}
