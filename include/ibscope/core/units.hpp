#pragma once
/// Units: byte sizes (K/M/G/T suffixes are binary, as in nccl-tests and perftest), rates
/// (GB/s = 1e9 B/s, Gb/s = 1e9 bit/s) and durations. Parsing throws UsageError.

#include <cstdint>
#include <string>
#include <string_view>

namespace ibscope::units {

inline constexpr double kBytesPerGB = 1e9;   ///< GB/s as nccl-tests defines it
inline constexpr double kBitsPerGbit = 1e9;  ///< Gb/s, link signalling rates

/// Parses "4096", "64K", "1M", "2G", "1T" (also "KiB"/"KB" spellings; all binary multiples).
/// Throws UsageError naming the flag on anything else, on overflow, and on negative numbers.
std::uint64_t parse_size_bytes(std::string_view text, std::string_view flag);

/// Parses a duration in seconds: "60", "2.5", "500ms", "90s", "2m". Throws UsageError.
double parse_duration_s(std::string_view text, std::string_view flag);

/// Human-readable binary size: 1024 -> "1 KiB", 1536 -> "1.5 KiB", 100 -> "100 B".
std::string format_size(std::uint64_t bytes);
/// 1204 -> "1,204": counts in messages (NIC counters' growth).
std::string with_commas(std::uint64_t count);

/// Bytes per second -> GB/s (1e9).
inline double to_gb_per_s(double bytes, double seconds) noexcept {
  return seconds > 0 ? bytes / seconds / kBytesPerGB : 0.0;
}

}  // namespace ibscope::units
