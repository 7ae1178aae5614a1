#pragma once
/// splitmix64: a fixed, documented sequence, so a seed gives the same numbers on every build,
/// platform and rank (std::uniform_int_distribution and std::shuffle are
/// implementation-defined). Not for cryptography.

#include <cstdint>

namespace ibscope {

struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Below n (> 0); the modulo bias is below n / 2^64.
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
  /// In (0, 1).
  double uniform() noexcept { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
};

}  // namespace ibscope
