#include "ibscope/collectives/harness/tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

const CollectiveAlgorithmInfo* algorithm_named(Collective c, std::string_view name) {
  for (const auto& a : algorithms_for(c)) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

bool has_algorithm(Collective c, std::string_view name) {
  return algorithm_named(c, name) != nullptr;
}

bool needs_arena(Collective c, std::string_view name) {
  const CollectiveAlgorithmInfo* a = algorithm_named(c, name);
  return a != nullptr && a->caps.needs_intra_host_arena;
}

std::string_view arena_algorithm(Collective c) {
  for (const auto& a : algorithms_for(c)) {
    if (a.caps.needs_intra_host_arena) return a.name;
  }
  return {};
}

TuningTable derive_tuning(const std::vector<measure::CollectiveRow>& rows, int hosts) {
  // (collective, ranks) -> size -> algorithm -> summed median time; sizes where an algorithm
  // was wrong are remembered to disqualify it there.
  using Key = std::tuple<std::string, int>;
  std::map<Key, std::map<std::uint64_t, std::map<std::string, double>>> oop, ip;
  std::map<Key, std::map<std::uint64_t, std::map<std::string, bool>>> wrong;
  for (const auto& r : rows) {
    if (r.size_bytes == 0 || r.iteration_us.n == 0) continue;
    const Key key{std::string(name_of(r.collective)), r.ranks};
    auto& table = r.in_place ? ip : oop;
    table[key][r.size_bytes][r.algorithm] += r.iteration_us.p50;
    if (r.wrong && *r.wrong > 0) wrong[key][r.size_bytes][r.algorithm] = true;
  }
  TuningTable out;
  out.source = "this run";
  std::map<Key, bool> keys;
  for (const auto& [k, v] : oop) keys[k] = true;
  for (const auto& [k, v] : ip) keys[k] = true;
  for (const auto& [key, unused] : keys) {
    std::map<std::uint64_t, std::map<std::string, double>> by_size = ip[key];
    for (const auto& [size, algos] : oop[key]) by_size[size] = algos;  // out-of-place preferred
    std::map<std::string, bool> algorithms_seen;
    TuningEntry entry{std::get<0>(key), std::get<1>(key), hosts, {}};
    for (const auto& [size, algos] : by_size) {
      std::string best;
      double best_us = 0;
      for (const auto& [name, us] : algos) {
        algorithms_seen[name] = true;
        if (wrong[key][size][name]) continue;
        if (best.empty() || us < best_us) {
          best = name;
          best_us = us;
        }
      }
      if (best.empty()) continue;
      if (!entry.ranges.empty() && entry.ranges.back().algorithm == best) {
        entry.ranges.back().max_bytes = size;
      } else {
        entry.ranges.push_back({size, best});
      }
    }
    if (algorithms_seen.size() < 2 || entry.ranges.empty()) continue;
    entry.ranges.back().max_bytes = UINT64_MAX;
    out.entries.push_back(std::move(entry));
  }
  return out;
}

std::optional<std::string> select_algorithm(const TuningTable& table, Collective c, int ranks,
                                            int hosts, std::uint64_t bytes) {
  for (const auto& e : table.entries) {
    if (e.collective != name_of(c) || e.ranks != ranks || e.hosts != hosts) continue;
    for (const auto& range : e.ranges) {
      if (bytes <= range.max_bytes) return range.algorithm;
    }
  }
  return std::nullopt;
}

bool default_rule_may_pick_hier(Collective c, int ranks, int hosts) {
  return !arena_algorithm(c).empty() && ranks > 1 && ranks > hosts;
}

bool default_rule_picks_hier(Collective c, int ranks, int hosts, std::uint64_t bytes) {
  if (!default_rule_may_pick_hier(c, ranks, hosts)) return false;
  return hosts == 1 || bytes >= kHierAcrossHostsMinBytes;
}

std::string default_algorithm(Collective c, int ranks, std::uint64_t bytes) {
  struct Rule {
    std::uint64_t max_bytes;
    std::string_view algorithm;
  };
  static constexpr Rule kAllreduceRules[] = {
      {16 * 1024, "rd"}, {512 * 1024, "rhd"}, {UINT64_MAX, "ring"}};
  if (c == Collective::kAllreduce && ranks > 1) {
    for (const auto& rule : kAllreduceRules) {
      if (bytes <= rule.max_bytes && has_algorithm(c, rule.algorithm)) {
        return std::string(rule.algorithm);
      }
      if (bytes <= rule.max_bytes) break;
    }
  }
  return std::string(algorithms_for(c).front().name);
}

void TuningRows::add(const std::vector<measure::CollectiveRow>& rows) {
  for (const auto& r : rows) {
    if (!r.selected_by.empty()) continue;
    rows_.push_back(r);
    rows_.back().samples_us.clear();  // the tuning table needs the statistics only
  }
}

std::optional<TuningTable> TuningRows::derive(int hosts) const {
  std::set<std::string> measured;
  for (const auto& r : rows_) measured.insert(r.algorithm);
  if (measured.size() < 2) return std::nullopt;
  return derive_tuning(rows_, hosts);
}

}  // namespace ibscope::collectives
