#pragma once
// Binary size constants for the tests' own arithmetic (the library parses and prints sizes
// through ibscope/core/units.hpp).

#include <cstdint>

namespace ibscope::test {

inline constexpr std::uint64_t kKiB = 1ULL << 10;
inline constexpr std::uint64_t kMiB = 1ULL << 20;
inline constexpr std::uint64_t kGiB = 1ULL << 30;
inline constexpr std::uint64_t kTiB = 1ULL << 40;

}  // namespace ibscope::test
