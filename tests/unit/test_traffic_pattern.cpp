// Traffic patterns (incast, one-to-many, bisection): every hub in turn, K validation, flows
// disjoint where they must be, and Jain's fairness index.

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/traffic_pattern.hpp"

namespace {

using ibscope::measure::Flow;
using ibscope::measure::HubSelection;
using ibscope::measure::PatternKind;
using ibscope::measure::TrafficPattern;

std::vector<std::vector<Flow>> tp_all_rounds(const TrafficPattern& p, const HubSelection& h,
                                             int units) {
  std::vector<std::vector<Flow>> rounds;
  for (int r = 0; r < ibscope::measure::pattern_round_count(p, h, units); ++r)
    rounds.push_back(ibscope::measure::pattern_round(p, h, units, r));
  return rounds;
}

}  // namespace

TEST_CASE("pattern: parsing and spelling", "[pattern]") {
  using ibscope::measure::parse_traffic_pattern;
  CHECK(parse_traffic_pattern("pairs").is_pairs());
  const auto incast = parse_traffic_pattern("incast:3");
  CHECK(incast.kind == PatternKind::kIncast);
  CHECK(incast.k == 3);
  CHECK(to_string(incast) == "incast:3");
  CHECK(to_string(parse_traffic_pattern("one-to-many:2")) == "one-to-many:2");
  CHECK(parse_traffic_pattern("bisection").kind == PatternKind::kBisection);
  for (const char* bad : {"incast", "incast:", "incast:0", "incast:-1", "incast:2x",
                          "one-to-many:0", "bisect", "", "all"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_traffic_pattern(bad), ibscope::UsageError);
  }
}

TEST_CASE("pattern: hub selection parsing", "[pattern]") {
  using ibscope::measure::parse_hub_selection;
  CHECK(parse_hub_selection("all").mode == HubSelection::Mode::kAll);
  const auto s = parse_hub_selection("sample:4");
  CHECK(s.mode == HubSelection::Mode::kSample);
  CHECK(s.sample == 4);
  CHECK(parse_hub_selection("3").list == std::vector<int>{3});
  CHECK(parse_hub_selection("0,5,2").list == std::vector<int>{0, 5, 2});
  for (const char* bad : {"sample:0", "sample:", "1,,2", "-1", "x", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_hub_selection(bad), ibscope::UsageError);
  }
}

TEST_CASE("pattern: K must leave a hub and K others", "[pattern]") {
  using ibscope::measure::parse_traffic_pattern;
  using ibscope::measure::validate_pattern;
  const HubSelection all;
  CHECK_NOTHROW(validate_pattern(parse_traffic_pattern("incast:3"), all, 4));
  CHECK_THROWS_AS(validate_pattern(parse_traffic_pattern("incast:4"), all, 4), ibscope::UsageError);
  CHECK_THROWS_AS(validate_pattern(parse_traffic_pattern("incast:9"), all, 4), ibscope::UsageError);
  CHECK_THROWS_AS(validate_pattern(parse_traffic_pattern("one-to-many:2"), all, 2),
                  ibscope::UsageError);
  CHECK_THROWS_AS(validate_pattern(parse_traffic_pattern("bisection"), all, 1),
                  ibscope::UsageError);
  CHECK_NOTHROW(validate_pattern(parse_traffic_pattern("bisection"), all, 2));
  CHECK_THROWS_AS(validate_pattern(parse_traffic_pattern("incast:1"),
                                   ibscope::measure::parse_hub_selection("sample:5"), 4),
                  ibscope::UsageError);
  CHECK_THROWS_AS(validate_pattern(parse_traffic_pattern("incast:1"),
                                   ibscope::measure::parse_hub_selection("1,4"), 4),
                  ibscope::UsageError);
  try {
    validate_pattern(parse_traffic_pattern("incast:4"), all, 4);
  } catch (const ibscope::UsageError& e) {
    CHECK_THAT(e.what(), Catch::Contains("1..3") && Catch::Contains("4 hosts"));
  }
}

TEST_CASE("pattern: incast takes every receiver in turn, K distinct senders", "[pattern]") {
  for (int units = 2; units <= 40; ++units) {
    for (int k = 1; k < units; ++k) {
      const TrafficPattern p{PatternKind::kIncast, k};
      const auto rounds = tp_all_rounds(p, {}, units);
      REQUIRE(static_cast<int>(rounds.size()) == units);
      std::set<int> receivers;
      for (std::size_t r = 0; r < rounds.size(); ++r) {
        REQUIRE(static_cast<int>(rounds[r].size()) == k);
        std::set<int> senders;
        for (const Flow& f : rounds[r]) {
          CHECK(f.dst == static_cast<int>(r));
          CHECK(f.src != f.dst);
          CHECK(f.src >= 0);
          CHECK(f.src < units);
          senders.insert(f.src);
        }
        CHECK(static_cast<int>(senders.size()) == k);
        receivers.insert(rounds[r].front().dst);
      }
      CHECK(static_cast<int>(receivers.size()) == units);
    }
  }
}

TEST_CASE("pattern: one-to-many mirrors incast", "[pattern]") {
  const TrafficPattern p{PatternKind::kOneToMany, 3};
  const auto rounds = tp_all_rounds(p, {}, 5);
  REQUIRE(rounds.size() == 5);
  CHECK(rounds[4] == std::vector<Flow>{{4, 0}, {4, 1}, {4, 2}});
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> receivers;
    for (const Flow& f : rounds[r]) {
      CHECK(f.src == static_cast<int>(r));
      receivers.insert(f.dst);
    }
    CHECK(receivers.size() == 3);
    CHECK(receivers.count(static_cast<int>(r)) == 0);
  }
}

TEST_CASE("pattern: hub samples and lists", "[pattern]") {
  const TrafficPattern p{PatternKind::kIncast, 2};
  HubSelection sample;
  sample.mode = HubSelection::Mode::kSample;
  sample.sample = 4;
  REQUIRE(ibscope::measure::pattern_round_count(p, sample, 10) == 4);
  std::vector<int> hubs;
  for (int r = 0; r < 4; ++r) hubs.push_back(ibscope::measure::pattern_hub(p, sample, 10, r));
  CHECK(hubs == std::vector<int>{0, 2, 5, 7});
  sample.sample = 10;  // as many as units: every unit once
  std::set<int> every;
  for (int r = 0; r < 10; ++r) every.insert(ibscope::measure::pattern_hub(p, sample, 10, r));
  CHECK(every.size() == 10);
  const auto list = ibscope::measure::parse_hub_selection("3");
  REQUIRE(ibscope::measure::pattern_round_count(p, list, 4) == 1);
  CHECK(ibscope::measure::pattern_round(p, list, 4, 0) == std::vector<Flow>{{0, 3}, {1, 3}});
}

TEST_CASE("pattern: bisection is one round, both directions, every unit once each way",
          "[pattern]") {
  const TrafficPattern p{PatternKind::kBisection, 0};
  for (int units = 2; units <= 33; ++units) {
    REQUIRE(ibscope::measure::pattern_round_count(p, {}, units) == 1);
    const auto flows = ibscope::measure::pattern_round(p, {}, units, 0);
    REQUIRE(static_cast<int>(flows.size()) == 2 * (units / 2));
    std::set<int> senders, receivers;
    for (const Flow& f : flows) {
      // Across the cut, and the reverse flow is there too.
      CHECK((f.src < units / 2) != (f.dst < units / 2));
      CHECK(std::find(flows.begin(), flows.end(), Flow{f.dst, f.src}) != flows.end());
      senders.insert(f.src);
      receivers.insert(f.dst);
    }
    // Disjoint: no unit sends (or receives) twice, so each NIC carries one flow each way.
    CHECK(senders.size() == flows.size());
    CHECK(receivers.size() == flows.size());
  }
  CHECK(ibscope::measure::pattern_round_count(TrafficPattern{}, {}, 8) == 0);
}

TEST_CASE("pattern: Jain's fairness index", "[pattern][fairness]") {
  using ibscope::measure::jain_index;
  CHECK(jain_index(std::vector<double>{}) == 1);
  CHECK(jain_index(std::vector<double>{0, 0}) == 1);
  CHECK(jain_index(std::vector<double>{5, 5, 5, 5}) == Approx(1));
  CHECK(jain_index(std::vector<double>{1, 0, 0, 0}) == Approx(0.25));  // 1/n
  // (1+2+3)^2 / (3 * (1+4+9)) = 36 / 42
  CHECK(jain_index(std::vector<double>{1, 2, 3}) == Approx(36.0 / 42.0));
  // Scale-free.
  CHECK(jain_index(std::vector<double>{2e9, 4e9, 6e9}) == Approx(36.0 / 42.0));
  CHECK_THROWS_AS(jain_index(std::vector<double>{1, -1}), std::invalid_argument);
}

TEST_CASE("pattern: a round's aggregate and fairness from its flows", "[pattern][fairness]") {
  // Three flows of 100 MB; two took 1 s, one 2 s: 100, 100, 50 MB/s; aggregate 300 MB / 2 s.
  const std::vector<double> bytes{100e6, 100e6, 100e6}, seconds{1, 1, 2};
  const auto f = ibscope::measure::round_figures(bytes, seconds);
  REQUIRE(f.flow_gbps.size() == 3);
  CHECK(f.flow_gbps[2] == Approx(0.05));
  CHECK(f.aggregate_gbps == Approx(0.15));
  CHECK(f.fairness_jain == Approx(250.0 * 250.0 / (3 * (1e4 + 1e4 + 2500))));
  CHECK_THROWS_AS(ibscope::measure::round_figures(bytes, std::vector<double>{1}),
                  std::invalid_argument);
}
