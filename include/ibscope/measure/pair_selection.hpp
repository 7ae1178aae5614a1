#pragma once
/// Which rank pairs a point-to-point run measures: the one type and the one parser behind the
/// --pairs of `ibscope p2p`, `ibscope probe` and `ibscope accept` (each command accepts its own
/// spellings, PairsSyntax), and the rounds of disjoint pairs a selection stands for (pure;
/// unit-tested). Pairs are of "units": ranks, or hosts when accept pairs hosts rail to rail
/// (accept/pairing.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibscope::measure {

using PairRound = std::vector<std::pair<int, int>>;  ///< pairs that run at the same time

enum class PairsMode {
  kAuto,    ///< accept: all up to accept::kAutoAllMaxHosts hosts, random above
  kAll,     ///< every pair, in round-robin rounds of disjoint pairs
  kFirst,   ///< unit 0 with unit 1 only
  kRandom,  ///< `matchings` random perfect matchings, seeded, no pair twice
  kLog,     ///< ceil(log2 n) hypercube rounds: the same partners every run
  kList,    ///< PairSelection::list, each pair in its own round (the first rank initiates)
  kRounds,  ///< PairSelection::rounds as given (disjoint pairs a < b: accept's plans, retests)
};

/// K of `random` (and of accept's `auto` when it picks random).
inline constexpr int kDefaultMatchings = 8;

struct PairSelection {
  PairsMode mode = PairsMode::kAll;
  int matchings = kDefaultMatchings;  ///< kRandom: K
  std::optional<std::uint64_t> seed;  ///< kRandom: empty: drawn by the caller (accept: rank 0)
  std::vector<std::pair<int, int>> list;
  std::vector<PairRound> rounds;

  static PairSelection of(PairsMode m) {
    PairSelection s;
    s.mode = m;
    return s;
  }
};

/// The spellings a command's --pairs accepts.
enum class PairsSyntax {
  kAllFirst,   ///< p2p: all | first
  kRankList,   ///< probe: all | first | a list of rank pairs "0:1,2:3"
  kHostModes,  ///< accept: auto | all | first | log | random | random:K (K >= 1)
};

/// Parses --pairs as `syntax` allows; list ranks must be below `ranks`. Throws UsageError
/// naming the valid spellings.
PairSelection parse_pair_selection(std::string_view text, PairsSyntax syntax, int ranks = 0);

/// "all", "first", "auto", "log", "random:8", "0:1,2:3" (kList), "rounds" (kRounds).
std::string to_string(const PairSelection& selection);
/// "auto", "all", "first", "random", "log", "list", "rounds".
std::string_view mode_name(PairsMode mode) noexcept;

/// The rounds of pairs of units 0..units-1 (none below 2 units): every pair of a round runs at
/// the same time, no unit twice in a round. kAuto counts as kAll (resolve it first); kRandom
/// uses `seed` (deterministic in its arguments; at most the rounds of kAll). Throws UsageError
/// for a kList or kRounds pair outside the units (or, for kRounds, not a < b or a unit twice in
/// a round).
std::vector<PairRound> pair_rounds(const PairSelection& selection, int units,
                                   std::uint64_t seed = 0);

}  // namespace ibscope::measure
