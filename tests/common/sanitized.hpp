#pragma once
// What the sanitizer build (the debug preset: ASan + UBSan) runs smaller. Tests whose point is
// every type, op, algorithm or rank count, not the size, use smaller buffers or fewer rank
// counts there: the same code paths run under ASan, whose per-byte cost on megabyte buffers
// and 64-thread jobs was most of the debug suite's time (docs/build.md). The release suite
// runs them in full.

#include <string>

#ifndef IBSCOPE_TEST_SANITIZED
#define IBSCOPE_TEST_SANITIZED 0
#endif

namespace ibscope::test {

inline constexpr bool kSanitizedBuild = IBSCOPE_TEST_SANITIZED != 0;

/// `full` in the release build, `sanitized` in the sanitizer build.
inline std::string unless_sanitized(const std::string& full, const std::string& sanitized) {
  return kSanitizedBuild ? sanitized : full;
}

/// A comma list of message sizes for an every-type test: its largest size, 1 MiB + 8 B in the
/// release build (many pipeline chunks, an odd tail), is 256 KiB + 8 B under the sanitizers
/// (still several chunks and the same odd tail).
inline std::string type_sweep_sizes(const std::string& below_large) {
  return below_large + (kSanitizedBuild ? ",262152" : ",1048584");
}

}  // namespace ibscope::test
