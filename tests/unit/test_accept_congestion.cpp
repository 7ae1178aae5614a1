// accept --congestion, the pure parts: GPCNet's impact factor, the victims' figures, the verdict
// and the victim/congestor split.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "ibscope/accept/congestion.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/output/congestion_table.hpp"
#include "ibscope/output/prometheus.hpp"
#include "ibscope/results/acceptance.hpp"

using namespace ibscope;
using namespace ibscope::accept;

namespace {

// `hosts` hosts named h0.. with `per_host` ranks each, in blocks.
std::vector<std::string> congestion_hosts(int hosts, int per_host) {
  std::vector<std::string> out;
  for (int h = 0; h < hosts; ++h) {
    for (int k = 0; k < per_host; ++k) out.push_back("h" + std::to_string(h));
  }
  return out;
}

}  // namespace

TEST_CASE(
    "congestion impact factor is GPCNet's: congested/isolated for latency, isolated/"
    "congested for bandwidth",
    "[accept][congestion]") {
  CHECK(impact_factor(2.0, 5.0, false) == Approx(2.5));           // latency 2 us -> 5 us
  CHECK(impact_factor(10.0, 4.0, true) == Approx(2.5));           // 10 GB/s -> 4 GB/s
  CHECK(impact_factor(10.0, 12.0, true) == Approx(10.0 / 12.0));  // faster under load: < 1
  CHECK(std::isnan(impact_factor(0.0, 5.0, false)));
  CHECK(std::isnan(impact_factor(2.0, 0.0, true)));
}

TEST_CASE("congestion victim figures: pooled latency percentiles, busbw of the slowest rank",
          "[accept][congestion]") {
  std::vector<double> lat;
  for (int i = 1; i <= 100; ++i) lat.push_back(i);  // 1..100 us
  // Two victims, 4 iterations; iteration time is the slower victim's: 1000,2000,1000,1000 us.
  const std::vector<std::vector<double>> it{{1000, 500, 900, 1000}, {800, 2000, 1000, 700}};
  const VictimFigures f = victim_figures(lat, it, 1000000);
  CHECK(f.latency_p50_us == Approx(50.5));
  CHECK(f.latency_p99_us == Approx(99.01));
  CHECK(f.latency_samples == 100);
  CHECK(f.allreduce_iterations == 4);
  // mean 1250 us; 1e6 B / 1.25 ms = 0.8 GB/s x 2(2-1)/2 = 0.8 GB/s.
  CHECK(f.busbw_gbps == Approx(0.8));
  // p99 of {1000,1000,1000,2000} = 1000 + 0.97 x 1000 = 1970 us.
  CHECK(f.tail_busbw_gbps == Approx(1e6 / 1970e-6 / 1e9));
  // Four victims: factor 2 x 3/4.
  const VictimFigures g = victim_figures(lat, {{1000}, {1000}, {1000}, {1000}}, 1000000);
  CHECK(g.busbw_gbps == Approx(1.5));
  const VictimFigures none = victim_figures({}, {}, 1000000);
  CHECK(none.busbw_gbps == 0);
  CHECK(none.latency_samples == 0);
}

TEST_CASE(
    "congestion verdict: p50 and busbw against --max-congestion-impact, p99 and tail "
    "against --max-congestion-tail-impact",
    "[accept][congestion]") {
  CongestionOptions o;
  o.max_impact = 2.0;
  o.max_tail_impact = 4.0;
  VictimFigures iso{.latency_p50_us = 10,
                    .latency_p99_us = 20,
                    .busbw_gbps = 10,
                    .tail_busbw_gbps = 8,
                    .latency_samples = 100,
                    .allreduce_iterations = 20};
  VictimFigures con = iso;
  con.latency_p50_us = 19;    // 1.9: pass
  con.latency_p99_us = 90;    // 4.5: fail (tail)
  con.busbw_gbps = 4;         // 2.5: fail
  con.tail_busbw_gbps = 2.5;  // 3.2: pass (tail)
  const auto rows = judge_impact("incast", iso, con, o);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].metric == "latency_p50_us");
  CHECK(rows[0].impact == Approx(1.9));
  CHECK(rows[0].pass);
  CHECK(rows[1].metric == "latency_p99_us");
  CHECK(rows[1].tail);
  CHECK(rows[1].max_impact == 4.0);
  CHECK_FALSE(rows[1].pass);
  CHECK(rows[2].metric == "busbw_gbps");
  CHECK(rows[2].impact == Approx(2.5));
  CHECK_FALSE(rows[2].pass);
  CHECK(rows[3].impact == Approx(3.2));
  CHECK(rows[3].pass);
  for (const auto& r : rows) CHECK(r.congestor == "incast");
  // A figure that was not measured fails rather than passing.
  con.busbw_gbps = 0;
  CHECK_FALSE(judge_impact("incast", iso, con, o)[2].pass);
}

TEST_CASE("congestion split: 20 % of the hosts, spread, every rank of a victim host",
          "[accept][congestion]") {
  // 10 hosts x 2 ranks: 2 victim hosts, h2 and h7 (floor((2i+1) x 10 / 4)).
  const auto s = split_victims(congestion_hosts(10, 2), 0.2, {});
  CHECK(s.by_host);
  CHECK(s.victims == std::vector<int>{4, 5, 14, 15});
  CHECK(s.victim_hosts == 2);
  CHECK(s.congestor_hosts == 8);
  CHECK(s.congestors.size() == 16);
  // Pairs cross hosts, rail to rail.
  CHECK(s.victim_pairs == std::vector<std::pair<int, int>>{{4, 14}, {5, 15}});
  // One rank per host, 5 hosts: 20 % is one host, one rank: grown to two hosts.
  const auto t = split_victims(congestion_hosts(5, 1), 0.2, {});
  CHECK(t.victims.size() == 2);
  CHECK(t.victim_pairs.size() == 1);
  CHECK(t.congestors.size() == 3);
  // Victims and congestors are disjoint and cover the job, for every size that can be split.
  for (int h = 2; h <= 40; ++h) {
    for (int per : {1, 2, 8}) {
      if (h * per < 4) continue;
      for (double f : {0.1, 0.2, 0.5, 0.9}) {
        CongestionSplit x;
        try {
          x = split_victims(congestion_hosts(h, per), f, {});
        } catch (const UsageError&) {
          CHECK(per == 1);  // only one rank per host can run out of ranks
          continue;
        }
        std::set<int> all(x.victims.begin(), x.victims.end());
        all.insert(x.congestors.begin(), x.congestors.end());
        CHECK(static_cast<int>(all.size()) == h * per);
        CHECK(x.victims.size() + x.congestors.size() == all.size());
        CHECK(x.victims.size() >= 2);
        CHECK(x.congestors.size() >= 2);
        CHECK(x.victim_hosts + x.congestor_hosts == h);  // by host: no host is both
        CHECK(x.victim_pairs.size() == x.victims.size() / 2);
      }
    }
  }
}

TEST_CASE("congestion split: one host splits by rank, --victim-ranks exactly, bad input",
          "[accept][congestion]") {
  const auto one = split_victims(congestion_hosts(1, 4), 0.2, {});
  CHECK_FALSE(one.by_host);
  CHECK(one.victims == std::vector<int>{1, 3});
  CHECK(one.congestors == std::vector<int>{0, 2});
  CHECK(one.victim_pairs == std::vector<std::pair<int, int>>{{1, 3}});
  const auto explicit_ranks = split_victims(congestion_hosts(3, 2), 0.2, {2, 0});
  CHECK(explicit_ranks.victims == std::vector<int>{0, 2});
  CHECK(explicit_ranks.congestors == std::vector<int>{1, 3, 4, 5});
  CHECK(explicit_ranks.victim_hosts == 2);
  CHECK(explicit_ranks.congestor_hosts == 3);  // h0 and h1 hold both
  CHECK_THROWS_WITH(split_victims(congestion_hosts(1, 3), 0.2, {}),
                    Catch::Contains("at least 2 victim and 2 congestor ranks"));
  CHECK_THROWS_WITH(split_victims(congestion_hosts(2, 2), 0.2, {0, 9}),
                    Catch::Contains("rank 9 is not in the job"));
  CHECK_THROWS_WITH(split_victims(congestion_hosts(2, 2), 0.2, {1, 1}),
                    Catch::Contains("listed twice"));
  CHECK_THROWS_AS(split_victims(congestion_hosts(2, 2), 0.2, {0, 1, 2}), UsageError);
}

TEST_CASE("congestion options: congestor names and limits", "[accept][congestion]") {
  CHECK(parse_congestors("all").size() == 3);
  CHECK(parse_congestors("incast") == std::vector<CongestorPattern>{CongestorPattern::kIncast});
  CHECK(parse_congestors("broadcast,alltoall") ==
        std::vector<CongestorPattern>{CongestorPattern::kBroadcast, CongestorPattern::kAlltoall});
  CHECK_THROWS_WITH(parse_congestors("incast,bcast"), Catch::Contains("'bcast' is not"));
  CHECK_THROWS_WITH(parse_congestors("incast,incast"), Catch::Contains("twice"));
  CHECK_THROWS_AS(parse_congestors(""), UsageError);
  CongestionOptions o;
  CHECK_NOTHROW(validate(o));
  o.max_impact = 0.5;
  CHECK_THROWS_WITH(validate(o), Catch::Contains("--max-congestion-impact"));
  o = {};
  o.victim_fraction = 1;
  CHECK_THROWS_WITH(validate(o), Catch::Contains("--victim-fraction"));
}

TEST_CASE("congestion output: console table and Prometheus metrics", "[accept][congestion]") {
  results::Acceptance a;
  a.congestion = results::AcceptCongestion{
      .pass = false,
      .victim_ranks = {0, 2},
      .victim_hosts = {"h0", "h1"},
      .congestor_ranks = 4,
      .congestor_hosts = 3,
      .victim_pairs = 1,
      .impacts = {{"incast", "busbw_gbps", 10, 4, 2.5, 2, false, false},
                  {"incast", "latency_p50_us", 2, 0, std::nan(""), 2, false, false}},
      .loads = {{"incast", 12, 1.5, 0.01}}};
  const std::string table = output::congestion_table(*a.congestion);
  CHECK(table.find("incast     busbw_gbps                   10              4     2.50") !=
        std::string::npos);
  CHECK(table.find("FAIL") != std::string::npos);
  CHECK(table.find("# congestor incast: 12 round(s)") != std::string::npos);
  const std::string text =
      output::prometheus::exposition_text(output::prometheus::acceptance_metrics(a, 0));
  CHECK(text.find("ibscope_congestion_pass 0") != std::string::npos);
  CHECK(text.find("ibscope_congestion_impact{congestor=\"incast\",metric=\"busbw_gbps\"} 2.5") !=
        std::string::npos);
  // A metric that was not measured has no sample (NaN is no gauge value).
  CHECK(text.find("metric=\"latency_p50_us\"") == std::string::npos);
}
