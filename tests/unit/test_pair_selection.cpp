// The one --pairs type and parser (measure/pair_selection.hpp): each command's spellings and
// messages, and the rounds a selection stands for.
#include <catch2/catch.hpp>
#include <set>
#include <string_view>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/pair_selection.hpp"

using ibscope::UsageError;
using ibscope::measure::pair_rounds;
using ibscope::measure::PairRound;
using ibscope::measure::PairSelection;
using ibscope::measure::PairsMode;
using ibscope::measure::PairsSyntax;

namespace {

PairSelection probe_pairs(std::string_view text, int ranks) {
  return ibscope::measure::parse_pair_selection(text, PairsSyntax::kRankList, ranks);
}

// Every pair at most once, no unit twice in a round, every unit below `units`.
std::set<std::pair<int, int>> checked_pairs(const std::vector<PairRound>& rounds, int units) {
  std::set<std::pair<int, int>> seen;
  for (const auto& round : rounds) {
    std::set<int> busy;
    for (const auto& [a, b] : round) {
      CHECK(a >= 0);
      CHECK(b < units);
      CHECK(busy.insert(a).second);
      CHECK(busy.insert(b).second);
      CHECK(seen.insert({std::min(a, b), std::max(a, b)}).second);
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("pair selection: probe parses all first and explicit lists") {
  CHECK(probe_pairs("all", 4).mode == PairsMode::kAll);
  CHECK(probe_pairs("first", 4).mode == PairsMode::kFirst);
  const auto list = probe_pairs("0:3,2:1", 4);
  REQUIRE(list.mode == PairsMode::kList);
  CHECK(list.list == std::vector<std::pair<int, int>>{{0, 3}, {2, 1}});
  CHECK(to_string(list) == "0:3,2:1");
  CHECK_THROWS_WITH(probe_pairs("0:4", 4), Catch::Contains("rank 4 does not exist"));
  CHECK_THROWS_WITH(probe_pairs("1:1", 4), Catch::Contains("paired with itself"));
  CHECK_THROWS_WITH(probe_pairs("0:1,1:0", 4), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(probe_pairs("0-1", 4),
                    "--pairs '0-1': expected all, first, or a list of rank pairs like 0:1,2:3");
  CHECK_THROWS_AS(probe_pairs("a:1", 4), UsageError);
  CHECK_THROWS_AS(probe_pairs("", 4), UsageError);
  CHECK_THROWS_AS(probe_pairs("auto", 4), UsageError);  // accept's spelling only
}

TEST_CASE("pair selection: p2p takes all or first only, with its message") {
  using ibscope::measure::parse_pair_selection;
  CHECK(parse_pair_selection("all", PairsSyntax::kAllFirst).mode == PairsMode::kAll);
  CHECK(parse_pair_selection("first", PairsSyntax::kAllFirst).mode == PairsMode::kFirst);
  for (const char* bad : {"0:1", "auto", "random", ""}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_pair_selection(bad, PairsSyntax::kAllFirst),
                      "--pairs: '" + std::string(bad) + "' is not one of: all, first");
  }
  CHECK(to_string(parse_pair_selection("all", PairsSyntax::kAllFirst)) == "all");
  CHECK(to_string(parse_pair_selection("first", PairsSyntax::kAllFirst)) == "first");
}

TEST_CASE("pair selection: accept's host modes") {
  using ibscope::measure::parse_pair_selection;
  const auto accept = [](std::string_view t) {
    return parse_pair_selection(t, PairsSyntax::kHostModes);
  };
  CHECK(accept("auto").mode == PairsMode::kAuto);
  CHECK(accept("log").mode == PairsMode::kLog);
  CHECK(to_string(accept("random")) == "random:8");
  CHECK(to_string(accept("random:3")) == "random:3");
  CHECK(to_string(accept("auto")) == "auto");
  CHECK_THROWS_WITH(accept("0:1"),
                    "--pairs '0:1': expected auto, all, first, log, random or "
                    "random:K (K rounds)");
  CHECK_THROWS_WITH(accept("random:0"), Catch::Contains("K in random:K"));
}

TEST_CASE("pair selection: rounds cover every pair once with no rank twice in a round") {
  for (int p = 2; p <= 9; ++p) {
    const auto rounds = pair_rounds(PairSelection{}, p);
    CHECK(static_cast<int>(rounds.size()) == (p % 2 == 0 ? p - 1 : p));
    CHECK(static_cast<int>(checked_pairs(rounds, p).size()) == p * (p - 1) / 2);
    CHECK(pair_rounds(PairSelection::of(PairsMode::kAuto), p) == rounds);
  }
  CHECK(pair_rounds(PairSelection::of(PairsMode::kFirst), 5) == std::vector<PairRound>{{{0, 1}}});
  CHECK(pair_rounds(PairSelection{}, 1).empty());
  const auto listed = pair_rounds(probe_pairs("3:0,1:2", 4), 4);
  REQUIRE(listed.size() == 2);
  CHECK(listed[0] == PairRound{{3, 0}});  // 3 initiates
  CHECK_THROWS_AS(pair_rounds(probe_pairs("3:0", 4), 3), UsageError);
}

TEST_CASE("pair selection: random and log rounds for p = 2..64") {
  for (int p = 2; p <= 64; ++p) {
    INFO(p);
    PairSelection random = PairSelection::of(PairsMode::kRandom);
    random.matchings = 5;
    const auto r = pair_rounds(random, p, 42);
    CHECK(r.size() == std::min<std::size_t>(5, static_cast<std::size_t>(p % 2 == 0 ? p - 1 : p)));
    checked_pairs(r, p);
    CHECK(pair_rounds(random, p, 42) == r);  // deterministic in the seed
    const auto l = pair_rounds(PairSelection::of(PairsMode::kLog), p);
    int log2 = 0;
    while ((1 << log2) < p) ++log2;
    CHECK(static_cast<int>(l.size()) == log2);
    checked_pairs(l, p);
  }
}

TEST_CASE("pair selection: explicit rounds are checked") {
  PairSelection given = PairSelection::of(PairsMode::kRounds);
  given.rounds = {{{0, 1}, {2, 3}}, {{0, 2}}};
  CHECK(pair_rounds(given, 4) == given.rounds);
  given.rounds = {{{0, 1}, {1, 2}}};
  CHECK_THROWS_WITH(pair_rounds(given, 4), Catch::Contains("each once a round"));
  given.rounds = {{{0, 4}}};
  CHECK_THROWS_AS(pair_rounds(given, 4), UsageError);
}
