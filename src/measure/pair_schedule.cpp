#include "ibscope/measure/pair_schedule.hpp"

#include <algorithm>

namespace ibscope::measure {

std::vector<std::pair<int, int>> round_robin_round(int p, int r) {
  std::vector<std::pair<int, int>> round;
  if (p < 2) return round;
  // Circle method on an even number of slots; slot n-1 stays fixed, the others rotate. With odd
  // p the extra slot is a "bye".
  const int n = p % 2 == 0 ? p : p + 1;
  for (int i = 0; i < n / 2; ++i) {
    const int a = i == 0 ? n - 1 : (r + i) % (n - 1);
    const int b = (r + n - 1 - i) % (n - 1);
    if (a >= p || b >= p) continue;  // paired with the bye
    round.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(round.begin(), round.end());
  return round;
}

int round_robin_round_count(int p) noexcept { return p < 2 ? 0 : (p % 2 == 0 ? p - 1 : p); }

std::vector<std::vector<std::pair<int, int>>> round_robin_rounds(int p) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (int r = 0; r < round_robin_round_count(p); ++r) rounds.push_back(round_robin_round(p, r));
  return rounds;
}

std::vector<std::vector<std::pair<int, int>>> disjoint_rounds(
    const std::vector<std::pair<int, int>>& pairs) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (const auto& pair : pairs) {
    auto fits = [&](const std::vector<std::pair<int, int>>& round) {
      return partner_in_round(round, pair.first) < 0 && partner_in_round(round, pair.second) < 0;
    };
    auto it = std::find_if(rounds.begin(), rounds.end(), fits);
    if (it == rounds.end()) {
      rounds.push_back({pair});
    } else {
      it->push_back(pair);
    }
  }
  return rounds;
}

int partner_in_round(const std::vector<std::pair<int, int>>& round, int rank) noexcept {
  for (const auto& [a, b] : round) {
    if (a == rank) return b;
    if (b == rank) return a;
  }
  return -1;
}

}  // namespace ibscope::measure
