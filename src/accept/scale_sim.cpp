#include "ibscope/accept/scale_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "ibscope/accept/localize.hpp"
#include "ibscope/core/splitmix64.hpp"
#include "ibscope/measure/pair_schedule.hpp"

namespace ibscope::accept {
namespace {

// splitmix64 (core/splitmix64.hpp) and Box-Muller: a fixed sequence for a seed everywhere.
struct SimRng : SplitMix64 {
  int below(int n) noexcept {
    return static_cast<int>(SplitMix64::below(static_cast<std::uint64_t>(n)));
  }
  double gaussian() noexcept {
    return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
  }
};

struct SimLink {
  int host_a, host_b, rail;
  double gbps;
  int attempts;
  bool failed;
};

}  // namespace

SimFaults draw_faults(const SimFabric& f) {
  SimRng rng{f.fault_seed};
  std::set<int> used;
  auto fresh_host = [&] {
    for (;;) {
      const int h = rng.below(f.hosts);
      if (used.insert(h).second) return h;
    }
  };
  SimFaults out;
  for (int i = 0; i < f.slow_hosts; ++i) out.hosts.push_back(fresh_host());
  for (int i = 0; i < f.slow_nics; ++i) out.nics.emplace_back(fresh_host(), rng.below(f.rails));
  for (int i = 0; i < f.slow_links; ++i) {
    const int a = fresh_host(), b = fresh_host();
    out.links.emplace_back(std::min(a, b), std::max(a, b), rng.below(f.rails));
  }
  std::sort(out.hosts.begin(), out.hosts.end());
  std::sort(out.nics.begin(), out.nics.end());
  std::sort(out.links.begin(), out.links.end());
  return out;
}

SimOutcome simulate(const SimFabric& f, const SimFaults& faults, const PairSelection& spec,
                    std::uint64_t pairs_seed, const Thresholds& t, int retests) {
  // Ranks host-major: rank = host x rails + rail, as srun places one rank per NIC.
  std::vector<std::string> hosts_by_rank;
  hosts_by_rank.reserve(static_cast<std::size_t>(f.hosts) * static_cast<std::size_t>(f.rails));
  for (int h = 0; h < f.hosts; ++h) {
    for (int r = 0; r < f.rails; ++r) hosts_by_rank.push_back(fmt::format("h{}", h));
  }
  const PairPlan plan = plan_pairs(spec, hosts_by_rank, pairs_seed);

  std::vector<double> host_factor(static_cast<std::size_t>(f.hosts), 1.0);
  for (int h : faults.hosts) host_factor[static_cast<std::size_t>(h)] = f.slow_host_factor;
  std::vector<double> nic_factor(host_factor.size() * static_cast<std::size_t>(f.rails), 1.0);
  for (const auto& [h, r] : faults.nics) {
    nic_factor[static_cast<std::size_t>(h * f.rails + r)] = f.slow_nic_factor;
  }
  const std::set<std::tuple<int, int, int>> slow_links(faults.links.begin(), faults.links.end());

  SimRng noise{f.noise_seed};
  auto draw = [&](int ha, int hb, int rail) {
    double factor = std::min({host_factor[static_cast<std::size_t>(ha)],
                              host_factor[static_cast<std::size_t>(hb)],
                              nic_factor[static_cast<std::size_t>(ha * f.rails + rail)],
                              nic_factor[static_cast<std::size_t>(hb * f.rails + rail)]});
    if (slow_links.count({ha, hb, rail}) > 0) factor = std::min(factor, f.slow_link_factor);
    return f.expected_gbps * f.healthy_fraction * factor * (1 + f.jitter * noise.gaussian());
  };

  SimOutcome out;
  PairSelection shown = spec;
  if (spec.mode == PairsMode::kAuto) {
    shown = PairSelection::of(plan.mode);
    shown.matchings = spec.matchings;
  }
  out.pairs = measure::to_string(shown);
  if (plan.mode == PairsMode::kRandom) out.pairs += fmt::format(" seed {}", plan.seed);
  out.rounds = static_cast<int>(plan.rounds.size());
  std::vector<SimLink> links;
  for (const auto& round : plan.rounds) {
    for (const auto& [a, b] : round) {
      const int ha = a / f.rails, hb = b / f.rails, rail = a % f.rails;
      links.push_back(SimLink{ha, hb, rail, draw(ha, hb, rail), 1, false});
    }
  }
  out.measurements = links.size();

  // The verdicts of judge_links (absolute and relative), on the best attempt so far, against
  // the first measurement's median and MAD (as the runner does).
  std::vector<double> gbps;
  gbps.reserve(links.size());
  for (const auto& l : links) gbps.push_back(l.gbps);
  const double median = median_of(gbps);
  const double below = outlier_below_gbps(median, mad_of(gbps, median), t);
  auto judge = [&] {
    for (auto& l : links) {
      l.failed = l.gbps < t.min_fraction * f.expected_gbps || (links.size() >= 3 && l.gbps < below);
    }
  };
  judge();
  for (int k = 0; k < retests; ++k) {
    std::vector<std::pair<int, int>> suspects;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < links.size(); ++i) {
      if (!links[i].failed) continue;
      const int a = links[i].host_a * f.rails + links[i].rail;
      const int b = links[i].host_b * f.rails + links[i].rail;
      suspects.emplace_back(std::min(a, b), std::max(a, b));
      which.push_back(i);
    }
    if (suspects.empty()) break;
    out.retest_rounds += static_cast<int>(measure::disjoint_rounds(suspects).size());
    for (std::size_t i : which) {
      SimLink& l = links[i];
      l.gbps = std::max(l.gbps, draw(l.host_a, l.host_b, l.rail));
      ++l.attempts;
      ++out.measurements;
    }
    judge();
  }

  std::vector<RailLink> rail_links;
  rail_links.reserve(links.size());
  for (const auto& l : links) {
    rail_links.push_back(RailLink{l.host_a, l.rail, l.host_b, l.rail, l.failed});
  }
  const Localisation found = localize(rail_links);
  const std::set<int> slow_hosts(faults.hosts.begin(), faults.hosts.end());
  const std::set<std::pair<int, int>> slow_nics(faults.nics.begin(), faults.nics.end());
  for (int h : found.slow_hosts) (slow_hosts.count(h) ? out.hosts_found : out.false_hosts)++;
  for (const SlowNic& n : found.slow_nics) {
    (slow_nics.count({n.host, n.nic}) ? out.nics_found : out.false_nics)++;
  }
  for (std::size_t i : found.slow_links) {
    const SimLink& l = links[i];
    const auto key = std::tuple{std::min(l.host_a, l.host_b), std::max(l.host_a, l.host_b), l.rail};
    (slow_links.count(key) ? out.links_found : out.false_links)++;
  }
  for (const auto& l : links) {
    const auto key = std::tuple{std::min(l.host_a, l.host_b), std::max(l.host_a, l.host_b), l.rail};
    if (slow_links.count(key)) ++out.links_tested;
  }
  return out;
}

}  // namespace ibscope::accept
