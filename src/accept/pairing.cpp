#include "ibscope/accept/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/pair_schedule.hpp"

namespace ibscope::accept {

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

PairPlan plan_pairs(const PairSelection& spec, const std::vector<std::string>& hosts_by_rank,
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
  PairSelection resolved = PairSelection::of(plan.mode);
  resolved.matchings = plan.matchings;
  const auto rounds = measure::pair_rounds(resolved, units, plan.seed);
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
          : std::string(measure::mode_name(plan.mode));
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
