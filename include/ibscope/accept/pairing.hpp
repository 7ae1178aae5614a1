#pragma once
/// Which rank pairs `ibscope accept` measures, in rounds of disjoint pairs (pure; unit-tested).
///
/// Hosts are paired, not ranks: with one rank per NIC (L ranks per host), a pair of hosts (A, B)
/// is measured rail to rail, rank with local index i on A against local index i on B, all L at
/// once, so one round measures every rail of every paired host. The host pairs come from a mode:
///   all       every pair of hosts: h-1 rounds (h for odd h); finds every slow link;
///   first     the first two hosts only (one round);
///   random:K  K random perfect matchings of the hosts, seeded, no host pair twice: K rounds
///             whatever h is; a given host pair is measured with probability K/(h-1);
///   log       ceil(log2 h) hypercube rounds (host i with i XOR 2^k; the hosts whose partner
///             does not exist are paired among themselves): the same partners every run;
///   auto      all up to kAutoAllMaxHosts hosts, random:kDefaultMatchings above.
/// Fallback: when the hosts hold different numbers of ranks, or there is only one host, ranks
/// are paired instead of hosts (every rank its own unit, as before rail pairing): pairs may then
/// cross rails or stay inside one host (measured, not judged).
///
/// Cost: a round takes as long as one pair (every pair of a round runs at once); rounds:
/// all h-1, random K, log ceil(log2 h), independent of the ranks per host.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ibscope/measure/pair_selection.hpp"

namespace ibscope::accept {

// The selection type and its parser are measure's (--pairs of every command); accept adds the
// host layout, the rail-to-rail plan and auto's threshold.
using measure::kDefaultMatchings;
using measure::PairRound;
using measure::PairSelection;
using measure::PairsMode;

/// `auto` measures all host pairs up to this many hosts (127 rounds), random matchings above.
inline constexpr int kAutoAllMaxHosts = 128;

/// accept's --pairs: "auto" | "all" | "first" | "log" | "random" | "random:K" (K >= 1), the
/// selection's mode kAuto by default (AcceptOptions::pairs).
inline PairSelection default_pairs() { return PairSelection::of(PairsMode::kAuto); }

/// Ranks grouped by host, hosts in order of their first rank; ranks[h][i] is the rank with
/// local index i on host h (local index: its order among the ranks of its host).
struct HostLayout {
  std::vector<std::string> hosts;
  std::vector<std::vector<int>> ranks;
  /// Every host holds the same number of ranks (so rail i exists on every host).
  bool uniform() const noexcept;
};

HostLayout host_layout(const std::vector<std::string>& hosts_by_rank);

/// Each rank's local index on its host (its rail under rail pairing).
std::vector<int> local_indices(const std::vector<std::string>& hosts_by_rank);

struct PairPlan {
  PairsMode mode = PairsMode::kAll;  ///< resolved: never kAuto
  int matchings = 0;                 ///< kRandom: rounds asked for
  std::uint64_t seed = 0;            ///< kRandom: the seed used
  bool rail_to_rail = false;         ///< hosts paired rail to rail (else ranks paired)
  int hosts = 0;
  int units = 0;                  ///< what was paired: hosts (rail to rail) or ranks
  int ranks_per_host = 0;         ///< 0 when the hosts differ
  std::vector<PairRound> rounds;  ///< rank pairs (a < b)
  std::string description;        ///< one line for the console and the results' notes
};

/// The rounds of rank pairs for the job. Every rank computes the same plan from the same
/// arguments (the seed is rank 0's, broadcast). Throws UsageError for `first` with one rank.
PairPlan plan_pairs(const PairSelection& spec, const std::vector<std::string>& hosts_by_rank,
                    std::uint64_t seed);

/// The fraction of all host pairs (rank pairs in the fallback) that the plan measures: for
/// random:K with even h, K/(h-1), the chance that one given slow link is measured at all.
double pair_coverage(const PairPlan& plan) noexcept;

}  // namespace ibscope::accept
