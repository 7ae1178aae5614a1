#pragma once
// Shared by the fuzz targets (tests/fuzz/targets/): the input as text or bytes, JSON parsing
// that never throws, and a property check that aborts, so that libFuzzer and the replay test
// (replay_main.cpp) both report a broken property as a crash.
//
// Convention: a target catches only the typed errors its parser documents (UsageError,
// RemoteError, wire::ProtocolError). Any other exception escapes: nlohmann type_error,
// std::out_of_range, std::length_error or bad_alloc from a length the input claims are bugs.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>

namespace ibscope::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

/// The document, or nothing for text that is not JSON: every loader turns a parse error into
/// its own typed error before validating, which is what the targets exercise.
inline std::optional<nlohmann::json> parse_json(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

[[noreturn]] inline void property_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace ibscope::fuzz

/// Aborts (a crash for libFuzzer, a failure for the replay test) when `cond` is false.
#define IBSCOPE_FUZZ_CHECK(cond) \
  ((cond) ? (void)0 : ::ibscope::fuzz::property_failed(#cond, __FILE__, __LINE__))
