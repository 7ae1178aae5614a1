#include "ibscope/accept/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <set>

#include "ibscope/core/error.hpp"
#include "ibscope/core/splitmix64.hpp"
#include "ibscope/measure/pair_schedule.hpp"

namespace ibscope::accept {
namespace {

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
  std::vector<int> which(static_cast<std::size_t>(measure::round_robin_round_count(units)));
  std::iota(which.begin(), which.end(), 0);
  seeded_shuffle(which, rng);
  which.resize(std::min(which.size(), static_cast<std::size_t>(matchings)));
  std::vector<PairRound> all;
  for (int r : which) {
    PairRound round = measure::round_robin_round(units, r);
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

std::string_view mode_name(PairsMode m) {
  switch (m) {
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
  }
  return "?";
}

}  // namespace

PairsSpec parse_pairs_spec(std::string_view text) {
  PairsSpec s;
  if (text == "auto") return s;
  if (text == "all") {
    s.mode = PairsMode::kAll;
    return s;
  }
  if (text == "first") {
    s.mode = PairsMode::kFirst;
    return s;
  }
  if (text == "log") {
    s.mode = PairsMode::kLog;
    return s;
  }
  if (text == "random") {
    s.mode = PairsMode::kRandom;
    return s;
  }
  if (text.substr(0, 7) == "random:") {
    const std::string_view k = text.substr(7);
    int value = 0;
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), value);
    if (ec != std::errc() || end != k.data() + k.size() || value < 1 || value > 100000) {
      throw UsageError(
          fmt::format("--pairs '{}': K in random:K must be a whole number of rounds >= 1", text));
    }
    s.mode = PairsMode::kRandom;
    s.matchings = value;
    return s;
  }
  throw UsageError(fmt::format(
      "--pairs '{}': expected auto, all, first, log, random or random:K (K rounds)", text));
}

std::string to_string(const PairsSpec& s) {
  if (s.mode == PairsMode::kRandom) return fmt::format("random:{}", s.matchings);
  return std::string(mode_name(s.mode));
}

bool HostLayout::uniform() const noexcept {
  return std::all_of(ranks.begin(), ranks.end(),
                     [&](const auto& r) { return r.size() == ranks.front().size(); });
}

HostLayout host_layout(const std::vector<std::string>& hosts_by_rank) {
  HostLayout layout;
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < hosts_by_rank.size(); ++r) {
    const auto [it, inserted] = index.emplace(hosts_by_rank[r], layout.hosts.size());
    if (inserted) {
      layout.hosts.push_back(hosts_by_rank[r]);
      layout.ranks.emplace_back();
    }
    layout.ranks[it->second].push_back(static_cast<int>(r));
  }
  return layout;
}

std::vector<int> local_indices(const std::vector<std::string>& hosts_by_rank) {
  std::map<std::string, int> seen;
  std::vector<int> out;
  out.reserve(hosts_by_rank.size());
  for (const auto& h : hosts_by_rank) out.push_back(seen[h]++);
  return out;
}

std::vector<PairRound> unit_rounds(PairsMode mode, int units, int matchings, std::uint64_t seed) {
  if (units < 2) return {};
  switch (mode) {
    case PairsMode::kAuto:
    case PairsMode::kAll:
      return measure::round_robin_rounds(units);
    case PairsMode::kFirst:
      return {{{0, 1}}};
    case PairsMode::kRandom:
      return random_rounds(units, matchings, seed);
    case PairsMode::kLog:
      return log_rounds(units);
  }
  return {};
}

PairPlan plan_pairs(const PairsSpec& spec, const std::vector<std::string>& hosts_by_rank,
                    std::uint64_t seed) {
  const HostLayout layout = host_layout(hosts_by_rank);
  PairPlan plan;
  plan.hosts = static_cast<int>(layout.hosts.size());
  plan.rail_to_rail = plan.hosts >= 2 && layout.uniform();
  plan.ranks_per_host =
      layout.uniform() && !layout.ranks.empty() ? static_cast<int>(layout.ranks[0].size()) : 0;
  const int units = plan.rail_to_rail ? plan.hosts : static_cast<int>(hosts_by_rank.size());
  plan.units = units;
  plan.mode = spec.mode;
  if (plan.mode == PairsMode::kAuto) {
    plan.mode = plan.hosts <= kAutoAllMaxHosts ? PairsMode::kAll : PairsMode::kRandom;
  }
  if (plan.mode == PairsMode::kRandom) {
    plan.matchings = spec.matchings;
    plan.seed = seed;
  }
  if (plan.mode == PairsMode::kFirst && units < 2) {
    throw UsageError("--pairs first needs at least 2 ranks");
  }
  const auto rounds = unit_rounds(plan.mode, units, plan.matchings, plan.seed);
  if (plan.rail_to_rail) {
    for (const auto& host_round : rounds) {
      PairRound round;
      for (const auto& [a, b] : host_round) {
        const auto& ra = layout.ranks[static_cast<std::size_t>(a)];
        const auto& rb = layout.ranks[static_cast<std::size_t>(b)];
        for (std::size_t i = 0; i < ra.size(); ++i) {
          round.emplace_back(std::min(ra[i], rb[i]), std::max(ra[i], rb[i]));
        }
      }
      std::sort(round.begin(), round.end());
      plan.rounds.push_back(std::move(round));
    }
  } else if (plan.mode == PairsMode::kFirst && plan.hosts >= 2) {
    // Ranks 0 and 1 may share a host: rank 0 with the first rank of the next host instead.
    plan.rounds = {{{0, layout.ranks[1][0]}}};
  } else {
    plan.rounds = rounds;
  }

  const std::string what =
      plan.mode == PairsMode::kRandom
          ? fmt::format("random:{} (seed {}; repeat with --pairs random:{} --pairs-seed {})",
                        plan.matchings, plan.seed, plan.matchings, plan.seed)
          : std::string(mode_name(plan.mode));
  const std::string auto_note = spec.mode == PairsMode::kAuto
                                    ? fmt::format(" (auto: all up to {} hosts, random:{} above)",
                                                  kAutoAllMaxHosts, spec.matchings)
                                    : "";
  if (plan.rail_to_rail) {
    plan.description = fmt::format(
        "pairs {}{}: {} rounds over {} hosts, rail to rail ({} rank(s) per host, local index i "
        "with local index i), {:.3g} % of the host pairs",
        what, auto_note, plan.rounds.size(), plan.hosts, plan.ranks_per_host,
        100 * pair_coverage(plan));
  } else {
    plan.description = fmt::format(
        "pairs {}{}: {} rounds over {} ranks, rank with rank ({}), {:.3g} % of the rank pairs",
        what, auto_note, plan.rounds.size(), hosts_by_rank.size(),
        plan.hosts < 2 ? "one host: its ranks' pairs do not cross the fabric"
                       : "the hosts hold different numbers of ranks, so rails cannot be matched",
        100 * pair_coverage(plan));
  }
  return plan;
}

double pair_coverage(const PairPlan& plan) noexcept {
  if (plan.units < 2) return 0;
  std::size_t pairs = 0;
  for (const auto& r : plan.rounds) pairs += r.size();
  const double per_unit_pair = plan.rail_to_rail ? plan.ranks_per_host : 1;
  return static_cast<double>(pairs) / per_unit_pair /
         (static_cast<double>(plan.units) * (plan.units - 1) / 2);
}

}  // namespace ibscope::accept
