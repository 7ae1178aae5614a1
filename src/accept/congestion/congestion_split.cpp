#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ibscope/accept/congestion.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::accept {
namespace {

// The victims in host order (hosts by first rank, ranks ascending inside a host), paired i with
// i + ceil(v/2): with as many victims on each victim host, local rank k meets local rank k of
// another victim host, so a pair crosses the fabric.
std::vector<std::pair<int, int>> pair_victims(const std::vector<int>& in_host_order) {
  std::vector<std::pair<int, int>> pairs;
  const std::size_t v = in_host_order.size();
  const std::size_t half = (v + 1) / 2;
  for (std::size_t i = 0; i + half < v; ++i) {
    pairs.emplace_back(in_host_order[i], in_host_order[i + half]);
  }
  return pairs;
}

}  // namespace

CongestionSplit split_victims(const std::vector<std::string>& host_of_rank, double victim_fraction,
                              const std::vector<int>& victim_ranks) {
  const int n = static_cast<int>(host_of_rank.size());
  // Hosts in the order of their first rank, each with its ranks.
  std::vector<std::vector<int>> hosts;
  std::map<std::string, std::size_t> index;
  for (int r = 0; r < n; ++r) {
    const auto [it, added] =
        index.try_emplace(host_of_rank[static_cast<std::size_t>(r)], hosts.size());
    if (added) hosts.emplace_back();
    hosts[it->second].push_back(r);
  }
  std::vector<bool> victim(static_cast<std::size_t>(n), false);
  CongestionSplit s;
  if (!victim_ranks.empty()) {
    s.by_host = false;
    for (const int r : victim_ranks) {
      if (r < 0 || r >= n) {
        throw UsageError(
            fmt::format("--victim-ranks: rank {} is not in the job (ranks 0..{})", r, n - 1));
      }
      if (victim[static_cast<std::size_t>(r)]) {
        throw UsageError(fmt::format("--victim-ranks: rank {} is listed twice", r));
      }
      victim[static_cast<std::size_t>(r)] = true;
    }
  } else if (hosts.size() >= 2) {
    const int h = static_cast<int>(hosts.size());
    // At least one host, and as many more as make 2 victim ranks (one rank per host).
    int v = std::clamp(static_cast<int>(std::lround(victim_fraction * h)), 1, h - 1);
    for (;; ++v) {
      std::fill(victim.begin(), victim.end(), false);
      int ranks = 0;
      for (int i = 0; i < v; ++i) {
        const auto host = static_cast<std::size_t>((2 * i + 1) * h / (2 * v));
        for (const int r : hosts[host]) victim[static_cast<std::size_t>(r)] = true;
        ranks += static_cast<int>(hosts[host].size());
      }
      if (ranks >= 2 || v >= h - 1) break;
    }
  } else {
    s.by_host = false;
    const int v =
        std::clamp(static_cast<int>(std::lround(victim_fraction * n)), 2, std::max(2, n - 2));
    for (int i = 0; i < v && i < n; ++i) {
      victim[static_cast<std::size_t>((2 * i + 1) * n / (2 * v))] = true;
    }
  }
  std::vector<int> in_host_order;
  for (const auto& ranks : hosts) {
    bool any_victim = false, any_congestor = false;
    for (const int r : ranks) {
      (victim[static_cast<std::size_t>(r)] ? any_victim : any_congestor) = true;
      if (victim[static_cast<std::size_t>(r)]) in_host_order.push_back(r);
    }
    s.victim_hosts += any_victim ? 1 : 0;
    s.congestor_hosts += any_congestor ? 1 : 0;
  }
  for (int r = 0; r < n; ++r) {
    (victim[static_cast<std::size_t>(r)] ? s.victims : s.congestors).push_back(r);
  }
  if (s.victims.size() < 2 || s.congestors.size() < 2) {
    throw UsageError(fmt::format(
        "accept --congestion needs at least 2 victim and 2 congestor ranks; this split of {} "
        "rank(s) on {} host(s) gives {} victim(s) and {} congestor(s) (--victim-fraction, "
        "--victim-ranks, or more hosts)",
        n, hosts.size(), s.victims.size(), s.congestors.size()));
  }
  s.victim_pairs = pair_victims(in_host_order);
  return s;
}

}  // namespace ibscope::accept
