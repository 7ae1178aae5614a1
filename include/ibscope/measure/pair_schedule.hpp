#pragma once
/// All pairs of p ranks in rounds of disjoint pairs (round-robin "circle" method): p-1 rounds
/// for even p, p rounds for odd p (one rank sits out each round). Every pair meets exactly
/// once, and no rank is in two pairs of the same round, so no NIC carries two tests at once.

#include <utility>
#include <vector>

namespace ibscope::measure {

/// Pairs (a, b) with a < b, grouped by round.
std::vector<std::vector<std::pair<int, int>>> round_robin_rounds(int p);

/// How many rounds round_robin_rounds(p) has, and its round r alone (0 <= r < that), sorted:
/// a few rounds of a large p without building all of them.
int round_robin_round_count(int p) noexcept;
std::vector<std::pair<int, int>> round_robin_round(int p, int r);

/// Groups `pairs` (each a < b, no duplicates) into as few rounds of disjoint pairs as a greedy
/// first-fit finds, keeping their order within a round (retests of a few suspect links).
std::vector<std::vector<std::pair<int, int>>> disjoint_rounds(
    const std::vector<std::pair<int, int>>& pairs);

/// This rank's partner in `round`, or -1 when it sits out.
int partner_in_round(const std::vector<std::pair<int, int>>& round, int rank) noexcept;

}  // namespace ibscope::measure
