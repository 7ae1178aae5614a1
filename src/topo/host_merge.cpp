#include "ibscope/topo/host_merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ibscope/core/error.hpp"

namespace ibscope::topo {
namespace {

int lowest_rank(const HostTopology& h) {
  return h.ranks.empty() ? 0 : *std::min_element(h.ranks.begin(), h.ranks.end());
}

// Equal apart from the ranks that reported it.
bool same_hardware(HostTopology a, HostTopology b) {
  a.ranks.clear();
  b.ranks.clear();
  return a == b;
}

}  // namespace

std::vector<HostTopology> merge_by_host(std::vector<HostTopology> per_rank) {
  std::stable_sort(
      per_rank.begin(), per_rank.end(),
      [](const HostTopology& a, const HostTopology& b) { return lowest_rank(a) < lowest_rank(b); });
  std::vector<HostTopology> hosts;
  std::vector<std::vector<int>> differing(per_rank.size());
  for (HostTopology& t : per_rank) {
    auto it = std::find_if(hosts.begin(), hosts.end(),
                           [&](const HostTopology& h) { return h.host == t.host; });
    if (it == hosts.end()) {
      hosts.push_back(std::move(t));
      continue;
    }
    if (!same_hardware(*it, t)) {
      auto& list = differing[static_cast<std::size_t>(it - hosts.begin())];
      list.insert(list.end(), t.ranks.begin(), t.ranks.end());
    }
    it->ranks.insert(it->ranks.end(), t.ranks.begin(), t.ranks.end());
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    auto& ranks = hosts[i].ranks;
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (differing[i].empty()) continue;
    std::sort(differing[i].begin(), differing[i].end());
    hosts[i].notes.push_back(fmt::format(
        "rank(s) {} on this host reported a different topology (other CPUs or devices visible "
        "to them); shown: rank {}'s",
        fmt::join(differing[i], ","), ranks.front()));
  }
  return hosts;
}

std::vector<std::string> host_of_rank(const std::vector<HostTopology>& hosts, int ranks,
                                      std::string_view command) {
  std::vector<std::string> out(static_cast<std::size_t>(ranks));
  for (const auto& h : hosts) {
    for (const int r : h.ranks) {
      if (r >= 0 && r < ranks) out[static_cast<std::size_t>(r)] = h.host;
    }
  }
  for (int r = 0; r < ranks; ++r) {
    if (out[static_cast<std::size_t>(r)].empty()) {
      throw RemoteError(fmt::format("{}: the job's topology has no host for rank {}", command, r));
    }
  }
  return out;
}

}  // namespace ibscope::topo
