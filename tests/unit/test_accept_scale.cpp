// Acceptance at scale: rail-to-rail pairing plans (all, random:K, log, first, the fallbacks), the
// localisation of slow hosts, NICs and links, and the simulated fabric with injected faults.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/accept/localize.hpp"
#include "ibscope/accept/pairing.hpp"
#include "ibscope/accept/scale_sim.hpp"
#include "ibscope/core/error.hpp"

using namespace ibscope::accept;

namespace {

// accept's --pairs spellings, through the one parser.
PairSelection accept_pairs(std::string_view text) {
  return ibscope::measure::parse_pair_selection(text, ibscope::measure::PairsSyntax::kHostModes);
}

// Ranks host-major: `per_host` ranks on each of `hosts` hosts "h0", "h1", ...
std::vector<std::string> job(int hosts, int per_host) {
  std::vector<std::string> out;
  for (int h = 0; h < hosts; ++h) {
    for (int i = 0; i < per_host; ++i) out.push_back("h" + std::to_string(h));
  }
  return out;
}

// Every round disjoint, every pair a < b, never inside one host.
void check_rounds(const PairPlan& plan, const std::vector<std::string>& hosts_by_rank) {
  for (const auto& round : plan.rounds) {
    std::set<int> seen;
    for (const auto& [a, b] : round) {
      REQUIRE(a < b);
      REQUIRE(seen.insert(a).second);
      REQUIRE(seen.insert(b).second);
      if (plan.rail_to_rail) REQUIRE(hosts_by_rank[a] != hosts_by_rank[b]);
    }
  }
}

std::set<std::pair<int, int>> host_pairs(const PairPlan& plan, int per_host) {
  std::set<std::pair<int, int>> out;
  for (const auto& round : plan.rounds) {
    for (const auto& [a, b] : round) out.insert({a / per_host, b / per_host});
  }
  return out;
}

}  // namespace

TEST_CASE("pairs: parse the modes and reject the rest", "[accept][scale]") {
  CHECK(accept_pairs("auto").mode == PairsMode::kAuto);
  CHECK(accept_pairs("all").mode == PairsMode::kAll);
  CHECK(accept_pairs("first").mode == PairsMode::kFirst);
  CHECK(accept_pairs("log").mode == PairsMode::kLog);
  CHECK(accept_pairs("random").matchings == kDefaultMatchings);
  const PairSelection r = accept_pairs("random:4");
  CHECK(r.mode == PairsMode::kRandom);
  CHECK(r.matchings == 4);
  CHECK(to_string(r) == "random:4");
  for (const char* bad : {"random:0", "random:", "random:x", "random:4x", "some", ""}) {
    INFO(bad);
    CHECK_THROWS_AS(accept_pairs(bad), ibscope::UsageError);
  }
}

TEST_CASE("pairs: all is every host pair on every rail in h-1 rounds", "[accept][scale]") {
  for (int hosts : {2, 3, 4, 7, 8}) {
    for (int per_host : {1, 2, 4}) {
      INFO("hosts " << hosts << " per host " << per_host);
      const auto ranks = job(hosts, per_host);
      const PairPlan plan = plan_pairs(accept_pairs("all"), ranks, 1);
      check_rounds(plan, ranks);
      CHECK(plan.rail_to_rail);
      CHECK(plan.rounds.size() == static_cast<std::size_t>(hosts % 2 == 0 ? hosts - 1 : hosts));
      std::size_t pairs = 0;
      for (const auto& round : plan.rounds) {
        pairs += round.size();
        // Rail to rail: local index i with local index i, every rail of a host pair at once.
        for (const auto& [a, b] : round) CHECK(a % per_host == b % per_host);
      }
      CHECK(pairs == static_cast<std::size_t>(hosts * (hosts - 1) / 2 * per_host));
      CHECK(host_pairs(plan, per_host).size() == static_cast<std::size_t>(hosts * (hosts - 1) / 2));
      CHECK(pair_coverage(plan) == Approx(1));
    }
  }
}

TEST_CASE("pairs: random K is K perfect matchings with no host pair twice", "[accept][scale]") {
  const auto ranks = job(64, 8);
  const PairPlan plan = plan_pairs(accept_pairs("random:5"), ranks, 42);
  check_rounds(plan, ranks);
  REQUIRE(plan.rounds.size() == 5);
  CHECK(plan.seed == 42);
  for (const auto& round : plan.rounds) CHECK(round.size() == 64 * 8 / 2);  // every rank busy
  CHECK(host_pairs(plan, 8).size() == 5 * 32);
  CHECK(pair_coverage(plan) == Approx(5.0 / 63));
  // The seed decides the pairs: the same on every rank, another seed other pairs.
  CHECK(plan_pairs(accept_pairs("random:5"), ranks, 42).rounds == plan.rounds);
  CHECK(plan_pairs(accept_pairs("random:5"), ranks, 43).rounds != plan.rounds);
  CHECK(plan.description.find("--pairs-seed 42") != std::string::npos);
  // Odd host count: one host sits out each round; K above h-1 gives every pair.
  const auto odd = job(9, 2);
  const PairPlan all_of_them = plan_pairs(accept_pairs("random:50"), odd, 7);
  check_rounds(all_of_them, odd);
  CHECK(all_of_them.rounds.size() == 9);
  CHECK(host_pairs(all_of_them, 2).size() == 36);
}

TEST_CASE("pairs: log is ceil(log2 h) rounds with distinct partners", "[accept][scale]") {
  for (int hosts = 2; hosts <= 70; ++hosts) {
    INFO("hosts " << hosts);
    const auto ranks = job(hosts, 2);
    const PairPlan plan = plan_pairs(accept_pairs("log"), ranks, 0);
    check_rounds(plan, ranks);
    CHECK(plan.rounds.size() == static_cast<std::size_t>(std::ceil(std::log2(hosts))));
    std::size_t pairs = 0;
    for (const auto& round : plan.rounds) {
      pairs += round.size();
      // Leftover hosts are paired first fit: a few may sit out (at most 5 for h < 200).
      CHECK(hosts - static_cast<int>(round.size()) <= 5);  // round.size() = 2 x host pairs
    }
    CHECK(host_pairs(plan, 2).size() * 2 == pairs);  // no host pair twice
  }
}

TEST_CASE("pairs: auto picks all up to the threshold and random above", "[accept][scale]") {
  CHECK(plan_pairs(default_pairs(), job(kAutoAllMaxHosts, 1), 3).mode == PairsMode::kAll);
  const PairPlan big = plan_pairs(default_pairs(), job(kAutoAllMaxHosts + 1, 2), 3);
  CHECK(big.mode == PairsMode::kRandom);
  CHECK(big.rounds.size() == static_cast<std::size_t>(kDefaultMatchings));
  CHECK(big.description.find("auto") != std::string::npos);
}

TEST_CASE("pairs: first is the first two hosts on every rail", "[accept][scale]") {
  const auto ranks = job(4, 3);
  const PairPlan plan = plan_pairs(accept_pairs("first"), ranks, 0);
  REQUIRE(plan.rounds.size() == 1);
  CHECK(plan.rounds[0] == PairRound{{0, 3}, {1, 4}, {2, 5}});
}

TEST_CASE("pairs: uneven hosts or one host pair ranks instead of rails", "[accept][scale]") {
  // Ranks need not be host-major: hosts are ordered by their first rank.
  const std::vector<std::string> uneven = {"a", "b", "a", "c", "b"};
  const PairPlan plan = plan_pairs(accept_pairs("all"), uneven, 0);
  CHECK_FALSE(plan.rail_to_rail);
  CHECK(plan.ranks_per_host == 0);
  CHECK(plan.rounds.size() == 5);  // round robin over 5 ranks
  CHECK(plan.description.find("different numbers of ranks") != std::string::npos);
  // first: rank 0 with the first rank of another host, not its neighbour on host a.
  const PairPlan first = plan_pairs(accept_pairs("first"), uneven, 0);
  REQUIRE(first.rounds.size() == 1);
  CHECK(first.rounds[0] == PairRound{{0, 1}});
  const PairPlan first_aab =
      plan_pairs(accept_pairs("first"), std::vector<std::string>{"a", "a", "b"}, 0);
  CHECK(first_aab.rounds[0] == PairRound{{0, 2}});
  const PairPlan one_host = plan_pairs(accept_pairs("all"), job(1, 4), 0);
  CHECK_FALSE(one_host.rail_to_rail);
  CHECK(one_host.rounds.size() == 3);
  const auto layout = host_layout({"x", "y", "x", "y"});
  CHECK(layout.hosts == std::vector<std::string>{"x", "y"});
  CHECK(layout.ranks[1] == std::vector<int>{1, 3});
  CHECK(layout.uniform());
  CHECK(local_indices({"x", "y", "x", "y"}) == std::vector<int>{0, 0, 1, 1});
  // Interleaved ranks, rail to rail: rank 0 (x, 0) with rank 1 (y, 0), rank 2 with rank 3.
  const PairPlan interleaved = plan_pairs(accept_pairs("all"), {"x", "y", "x", "y"}, 0);
  REQUIRE(interleaved.rounds.size() == 1);
  CHECK(interleaved.rounds[0] == PairRound{{0, 1}, {2, 3}});
}

TEST_CASE("localize: a slow host a slow NIC and a slow link", "[accept][scale]") {
  // Four hosts x 2 rails, all host pairs (3 partners each). Host 0 slow on both rails; host 1's
  // NIC 1 slow; the link host 2 - host 3 on rail 0 slow.
  std::vector<RailLink> links;
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      for (int rail = 0; rail < 2; ++rail) {
        const bool failed = a == 0 || (a == 1 && rail == 1) || (b == 1 && rail == 1) ||
                            (a == 2 && b == 3 && rail == 0);
        links.push_back(RailLink{a, rail, b, rail, failed});
      }
    }
  }
  const Localisation found = localize(links);
  CHECK(found.slow_hosts == std::vector<int>{0});
  REQUIRE(found.slow_nics.size() == 1);
  CHECK(found.slow_nics[0].host == 1);
  CHECK(found.slow_nics[0].nic == 1);
  CHECK(found.slow_nics[0].links == 3);
  CHECK(found.slow_nics[0].partners == 3);
  REQUIRE(found.slow_links.size() == 1);
  const RailLink& l = links[found.slow_links[0]];
  CHECK((l.host_a == 2 && l.host_b == 3 && l.nic_a == 0));
}

TEST_CASE("localize: one partner cannot tell which end is slow", "[accept][scale]") {
  // random:1: every NIC meets one host; the failed link is named, not a NIC or host.
  const std::vector<RailLink> links = {{0, 0, 1, 0, true}, {2, 0, 3, 0, false}};
  const Localisation found = localize(links);
  CHECK(found.slow_hosts.empty());
  CHECK(found.slow_nics.empty());
  CHECK(found.slow_links == std::vector<std::size_t>{0});
}

TEST_CASE("simulation: random 4 finds every slow host and NIC in 4 rounds", "[accept][scale]") {
  // 256 hosts x 4 rails, 2 % jitter: every slow host and NIC is found by 4 random matchings (a
  // NIC meets 4 hosts), nothing healthy is named; a slow link only when its hosts were paired.
  SimFabric f;
  f.hosts = 256;
  f.rails = 4;
  f.slow_hosts = 3;
  f.slow_nics = 4;
  f.slow_links = 4;
  const Thresholds t;
  for (std::uint64_t trial = 0; trial < 3; ++trial) {
    INFO("trial " << trial);
    f.fault_seed = 10 + trial;
    f.noise_seed = 20 + trial;
    const SimFaults faults = draw_faults(f);
    REQUIRE(faults.hosts.size() == 3);
    const SimOutcome r = simulate(f, faults, accept_pairs("random:4"), 30 + trial, t, 2);
    CHECK(r.rounds == 4);
    CHECK(r.hosts_found == 3);
    CHECK(r.nics_found == 4);
    CHECK(r.links_found == r.links_tested);
    CHECK(r.false_hosts == 0);
    CHECK(r.false_nics == 0);
    CHECK(r.false_links == 0);
    const SimOutcome log = simulate(f, faults, accept_pairs("log"), 0, t, 2);
    CHECK(log.rounds == 8);
    CHECK(log.hosts_found == 3);
    CHECK(log.nics_found == 4);
    CHECK(log.false_hosts + log.false_nics + log.false_links == 0);
  }
}

TEST_CASE("simulation: all pairs finds every slow link too", "[accept][scale]") {
  SimFabric f;
  f.hosts = 64;
  f.rails = 4;
  const SimFaults faults = draw_faults(f);
  const SimOutcome r = simulate(f, faults, accept_pairs("all"), 0, Thresholds{}, 2);
  CHECK(r.rounds == 63);
  CHECK(r.hosts_found == f.slow_hosts);
  CHECK(r.nics_found == f.slow_nics);
  CHECK(r.links_tested == f.slow_links);
  CHECK(r.links_found == f.slow_links);
  CHECK(r.false_hosts + r.false_nics + r.false_links == 0);
}

TEST_CASE("verdict: retests are judged against the first measurement's median", "[accept][scale]") {
  std::vector<LinkMeasurement> links;
  for (int i = 0; i < 6; ++i) {
    LinkMeasurement l;
    l.rank_a = 2 * i;
    l.rank_b = 2 * i + 1;
    l.host_a = "a" + std::to_string(i);
    l.host_b = "b" + std::to_string(i);
    l.measured_gbps = 10;
    links.push_back(l);
  }
  const AcceptReport first = judge_links(links, Thresholds{});
  CHECK(first.pass);
  const FabricReference reference = reference_of(first);
  CHECK(reference.median_gbps == 10);
  // A fabric median of 20 (say) makes every 10 GB/s link an outlier; the links' own would not.
  FabricReference faster = reference;
  faster.median_gbps = 20;
  const AcceptReport against = judge_links(links, Thresholds{}, &faster);
  CHECK_FALSE(against.pass);
  CHECK(against.median_gbps == 20);
  CHECK(judge_links(links, Thresholds{}, &reference).pass);
}
