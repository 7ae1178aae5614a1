#pragma once
// Shared by the symbolic simulations of the ring, tree and recursive patterns: each element
// carries the set of ranks whose contribution it holds as a 64-bit mask, for p = 1..64.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibscope::test::pattern_sim {

/// The largest rank count a 64-bit contribution mask can describe.
inline constexpr int kMaxRanks = 64;

/// The mask of an element that holds every one of `p` ranks' contributions.
inline std::uint64_t full_mask(int p) {
  return p == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << p) - 1;
}

/// Element counts that exercise empty, short, exact and uneven splits over `p` ranks.
inline std::vector<std::size_t> counts_for(int p) {
  const auto up = static_cast<std::size_t>(p);
  return {0, 1, up - 1, up, up + 1, 1009};
}

}  // namespace ibscope::test::pattern_sim
