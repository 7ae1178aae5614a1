#include "ibscope/measure/pair_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <set>

#include "ibscope/core/error.hpp"
#include "ibscope/core/splitmix64.hpp"
#include "ibscope/measure/pair_schedule.hpp"

namespace ibscope::measure {
namespace {

int parse_rank(std::string_view text, std::string_view whole, int ranks) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0) {
    throw UsageError(fmt::format("--pairs '{}': '{}' is not a rank number", whole, text));
  }
  if (value >= ranks) {
    throw UsageError(fmt::format("--pairs '{}': rank {} does not exist in a job of {} ranks", whole,
                                 value, ranks));
  }
  return value;
}

PairSelection parse_rank_list(std::string_view text, int ranks) {
  PairSelection selection = PairSelection::of(PairsMode::kList);
  std::set<std::pair<int, int>> seen;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      throw UsageError(fmt::format(
          "--pairs '{}': expected all, first, or a list of rank pairs like 0:1,2:3", text));
    }
    const int a = parse_rank(item.substr(0, colon), text, ranks);
    const int b = parse_rank(item.substr(colon + 1), text, ranks);
    if (a == b) throw UsageError(fmt::format("--pairs '{}': rank {} paired with itself", text, a));
    if (!seen.insert({std::min(a, b), std::max(a, b)}).second) {
      throw UsageError(fmt::format("--pairs '{}': pair {}:{} listed twice", text, a, b));
    }
    selection.list.emplace_back(a, b);
  }
  if (selection.list.empty()) throw UsageError("--pairs: empty list");
  return selection;
}

PairSelection parse_host_mode(std::string_view text) {
  if (text == "auto") return PairSelection::of(PairsMode::kAuto);
  if (text == "log") return PairSelection::of(PairsMode::kLog);
  if (text == "random") return PairSelection::of(PairsMode::kRandom);
  if (text.substr(0, 7) == "random:") {
    const std::string_view k = text.substr(7);
    int value = 0;
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), value);
    if (ec != std::errc() || end != k.data() + k.size() || value < 1 || value > 100000) {
      throw UsageError(
          fmt::format("--pairs '{}': K in random:K must be a whole number of rounds >= 1", text));
    }
    PairSelection s = PairSelection::of(PairsMode::kRandom);
    s.matchings = value;
    return s;
  }
  throw UsageError(fmt::format(
      "--pairs '{}': expected auto, all, first, log, random or random:K (K rounds)", text));
}

template <typename T>
void seeded_shuffle(std::vector<T>& v, SplitMix64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

std::vector<PairRound> random_rounds(int units, int matchings, std::uint64_t seed) {
  // K of the round-robin rounds, chosen at random, over a random relabelling of the units:
  // every round a perfect matching (one unit sits out when units is odd), no pair twice, and by
  // symmetry every pair equally likely to be measured.
  SplitMix64 rng{seed};
  std::vector<int> label(static_cast<std::size_t>(units));
  std::iota(label.begin(), label.end(), 0);
  seeded_shuffle(label, rng);
  // Which of the round-robin rounds: the first K of a seeded permutation of their indices.
  std::vector<int> which(static_cast<std::size_t>(round_robin_round_count(units)));
  std::iota(which.begin(), which.end(), 0);
  seeded_shuffle(which, rng);
  which.resize(std::min(which.size(), static_cast<std::size_t>(matchings)));
  std::vector<PairRound> all;
  for (int r : which) {
    PairRound round = round_robin_round(units, r);
    for (auto& [a, b] : round) {
      const int x = label[static_cast<std::size_t>(a)], y = label[static_cast<std::size_t>(b)];
      a = std::min(x, y);
      b = std::max(x, y);
    }
    std::sort(round.begin(), round.end());
    all.push_back(std::move(round));
  }
  return all;
}

std::vector<PairRound> log_rounds(int units) {
  std::vector<PairRound> rounds;
  std::set<std::pair<int, int>> used;
  for (int bit = 1; bit < units; bit <<= 1) {
    PairRound round;
    std::vector<int> alone;
    for (int i = 0; i < units; ++i) {
      const int j = i ^ bit;
      if (j >= units) {
        alone.push_back(i);
      } else if (i < j) {
        round.emplace_back(i, j);
      }
    }
    // Hypercube partners beyond the last unit (units not a power of two): pair those units
    // among themselves, first fit, with partners not met before.
    std::vector<bool> taken(alone.size(), false);
    for (std::size_t x = 0; x < alone.size(); ++x) {
      if (taken[x]) continue;
      for (std::size_t y = x + 1; y < alone.size(); ++y) {
        if (taken[y] || used.count({alone[x], alone[y]}) > 0) continue;
        round.emplace_back(alone[x], alone[y]);
        taken[x] = taken[y] = true;
        break;
      }
    }
    for (const auto& p : round) used.insert(p);
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<PairRound> list_rounds(const std::vector<std::pair<int, int>>& list, int units) {
  std::vector<PairRound> rounds;
  for (const auto& [a, b] : list) {
    if (a < 0 || b < 0 || a >= units || b >= units || a == b) {
      throw UsageError(
          fmt::format("pair {}:{}: expected two different ranks below {}", a, b, units));
    }
    rounds.push_back({{a, b}});
  }
  return rounds;
}

void check_rounds(const std::vector<PairRound>& rounds, int units) {
  for (const auto& round : rounds) {
    std::vector<bool> busy(static_cast<std::size_t>(units), false);
    for (const auto& [a, b] : round) {
      const bool valid = a >= 0 && b < units && a < b && !busy[static_cast<std::size_t>(a)] &&
                         !busy[static_cast<std::size_t>(b)];
      if (!valid) {
        throw UsageError(fmt::format(
            "round pair {}:{}: expected two ranks a < b below {}, each once a round", a, b, units));
      }
      busy[static_cast<std::size_t>(a)] = busy[static_cast<std::size_t>(b)] = true;
    }
  }
}

}  // namespace

PairSelection parse_pair_selection(std::string_view text, PairsSyntax syntax, int ranks) {
  if (text == "all") return PairSelection::of(PairsMode::kAll);
  if (text == "first") return PairSelection::of(PairsMode::kFirst);
  switch (syntax) {
    case PairsSyntax::kAllFirst:
      break;
    case PairsSyntax::kRankList:
      return parse_rank_list(text, ranks);
    case PairsSyntax::kHostModes:
      return parse_host_mode(text);
  }
  throw UsageError(fmt::format("--pairs: '{}' is not one of: all, first", text));
}

std::string_view mode_name(PairsMode mode) noexcept {
  switch (mode) {
    case PairsMode::kAuto:
      return "auto";
    case PairsMode::kAll:
      return "all";
    case PairsMode::kFirst:
      return "first";
    case PairsMode::kRandom:
      return "random";
    case PairsMode::kLog:
      return "log";
    case PairsMode::kList:
      return "list";
    case PairsMode::kRounds:
      return "rounds";
  }
  return "?";
}

std::string to_string(const PairSelection& s) {
  if (s.mode == PairsMode::kRandom) return fmt::format("random:{}", s.matchings);
  if (s.mode == PairsMode::kList) {
    std::string out;
    for (const auto& [a, b] : s.list) out += fmt::format("{}{}:{}", out.empty() ? "" : ",", a, b);
    return out;
  }
  return std::string(mode_name(s.mode));
}

std::vector<PairRound> pair_rounds(const PairSelection& selection, int units, std::uint64_t seed) {
  if (units < 2) return {};
  switch (selection.mode) {
    case PairsMode::kAuto:
    case PairsMode::kAll:
      return round_robin_rounds(units);
    case PairsMode::kFirst:
      return {{{0, 1}}};
    case PairsMode::kRandom:
      return random_rounds(units, selection.matchings, seed);
    case PairsMode::kLog:
      return log_rounds(units);
    case PairsMode::kList:
      return list_rounds(selection.list, units);
    case PairsMode::kRounds:
      check_rounds(selection.rounds, units);
      return selection.rounds;
  }
  return {};
}

}  // namespace ibscope::measure
