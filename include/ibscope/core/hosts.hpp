#pragma once
/// The hosts of a job from its per-rank hostnames (Bootstrap::hosts(), a results file's
/// job.hosts): which distinct hosts there are and how many. Pure; no I/O.

#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace ibscope {

/// The distinct names of `per_rank` (one hostname per rank, in rank order), each once, in the
/// order in which they first appear. Empty for an empty job.
inline std::vector<std::string> distinct_hosts(std::span<const std::string> per_rank) {
  // O(ranks): a job of thousands of hosts asks this of rank 0 alone.
  std::vector<std::string> hosts;
  std::unordered_set<std::string_view> seen;  // views of per_rank's strings, which outlive it
  for (const std::string& h : per_rank) {
    if (seen.insert(h).second) hosts.push_back(h);
  }
  return hosts;
}

/// How many distinct names `per_rank` holds: distinct_hosts(per_rank).size().
inline int count_hosts(std::span<const std::string> per_rank) {
  return static_cast<int>(distinct_hosts(per_rank).size());
}

}  // namespace ibscope
