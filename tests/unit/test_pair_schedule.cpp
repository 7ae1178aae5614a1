// Round-robin pair schedule: every pair exactly once, no rank twice in a round.

#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>
#include <vector>

#include "ibscope/measure/pair_schedule.hpp"

TEST_CASE("schedule: fewer than two ranks have nothing to pair", "[schedule]") {
  CHECK(ibscope::measure::round_robin_rounds(1).empty());
  CHECK(ibscope::measure::round_robin_rounds(0).empty());
  CHECK(ibscope::measure::round_robin_rounds(-3).empty());
}

TEST_CASE("schedule: two and three ranks", "[schedule]") {
  using Round = std::vector<std::pair<int, int>>;
  const auto two = ibscope::measure::round_robin_rounds(2);
  REQUIRE(two.size() == 1);
  CHECK(two[0] == Round{{0, 1}});
  const auto three = ibscope::measure::round_robin_rounds(3);
  REQUIRE(three.size() == 3);
  std::vector<std::pair<int, int>> all;
  for (const auto& round : three) {
    REQUIRE(round.size() == 1);
    all.push_back(round[0]);
  }
  std::sort(all.begin(), all.end());
  CHECK(all == Round{{0, 1}, {0, 2}, {1, 2}});
}

TEST_CASE("schedule: every pair exactly once for every p in 2..64", "[schedule]") {
  for (int p = 2; p <= 64; ++p) {
    INFO("p=" << p);
    const auto rounds = ibscope::measure::round_robin_rounds(p);
    REQUIRE(rounds.size() == static_cast<std::size_t>(p % 2 == 0 ? p - 1 : p));

    std::vector<std::vector<int>> met(p, std::vector<int>(p, 0));
    std::vector<int> sat_out(p, 0);
    for (std::size_t k = 0; k < rounds.size(); ++k) {
      const auto& round = rounds[k];
      INFO("round " << k);
      REQUIRE(round.size() == static_cast<std::size_t>(p / 2));
      REQUIRE(std::is_sorted(round.begin(), round.end()));
      std::vector<int> seen(p, 0);
      for (const auto& [a, b] : round) {
        REQUIRE(0 <= a);
        REQUIRE(a < b);
        REQUIRE(b < p);
        REQUIRE(++seen[a] == 1);  // no rank twice in a round
        REQUIRE(++seen[b] == 1);
        ++met[a][b];
      }
      for (int r = 0; r < p; ++r) {
        const int partner = ibscope::measure::partner_in_round(round, r);
        if (seen[r] == 0) {
          REQUIRE(partner == -1);
          ++sat_out[r];
          continue;
        }
        REQUIRE(partner >= 0);
        REQUIRE(partner < p);
        REQUIRE(partner != r);
        REQUIRE(ibscope::measure::partner_in_round(round, partner) == r);
        const std::pair<int, int> pair{std::min(r, partner), std::max(r, partner)};
        REQUIRE(std::find(round.begin(), round.end(), pair) != round.end());
      }
    }
    for (int a = 0; a < p; ++a) {
      for (int b = a + 1; b < p; ++b) {
        INFO("pair " << a << "," << b);
        REQUIRE(met[a][b] == 1);
      }
      // Odd p: each rank sits out exactly one round; even p: never.
      REQUIRE(sat_out[a] == (p % 2 == 0 ? 0 : 1));
    }
  }
}

TEST_CASE("schedule: partner_in_round of an absent rank is -1", "[schedule]") {
  const std::vector<std::pair<int, int>> round{{0, 3}, {1, 2}};
  CHECK(ibscope::measure::partner_in_round(round, 0) == 3);
  CHECK(ibscope::measure::partner_in_round(round, 3) == 0);
  CHECK(ibscope::measure::partner_in_round(round, 2) == 1);
  CHECK(ibscope::measure::partner_in_round(round, 4) == -1);
  CHECK(ibscope::measure::partner_in_round({}, 0) == -1);
}

TEST_CASE("schedule: disjoint_rounds packs retest pairs into few rounds of disjoint pairs",
          "[schedule]") {
  CHECK(ibscope::measure::disjoint_rounds({}).empty());
  // Host 2's three links (a star) need three rounds; two unrelated links share one.
  const auto star = ibscope::measure::disjoint_rounds({{0, 2}, {1, 2}, {2, 3}});
  REQUIRE(star.size() == 3);
  const auto mixed = ibscope::measure::disjoint_rounds({{0, 1}, {2, 3}, {0, 2}, {1, 3}});
  REQUIRE(mixed.size() == 2);
  CHECK(mixed[0] == std::vector<std::pair<int, int>>{{0, 1}, {2, 3}});
  CHECK(mixed[1] == std::vector<std::pair<int, int>>{{0, 2}, {1, 3}});
  // Whatever the input, no rank twice in a round and every pair kept.
  std::vector<std::pair<int, int>> all;
  for (int a = 0; a < 7; ++a) {
    for (int b = a + 1; b < 7; ++b) all.emplace_back(a, b);
  }
  std::size_t kept = 0;
  for (const auto& round : ibscope::measure::disjoint_rounds(all)) {
    std::vector<int> seen;
    for (const auto& [a, b] : round) {
      CHECK(std::find(seen.begin(), seen.end(), a) == seen.end());
      CHECK(std::find(seen.begin(), seen.end(), b) == seen.end());
      seen.push_back(a);
      seen.push_back(b);
      ++kept;
    }
  }
  CHECK(kept == all.size());
}
