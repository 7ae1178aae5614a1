#include "ibscope/core/units.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "ibscope/core/error.hpp"

namespace ibscope::units {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::uint64_t parse_size_bytes(std::string_view text, std::string_view flag) {
  const std::string_view s = trim(text);
  auto bad = [&](std::string_view why) {
    return UsageError(
        fmt::format("{}: invalid size '{}': {} (examples: 4096, 64K, 1M, 2G)", flag, text, why));
  };
  if (s.empty()) throw bad("empty");
  if (s.front() == '-') throw bad("negative");
  double number = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc() || end == s.data()) throw bad("not a number");
  const std::string_view suffix = trim(std::string_view(end, s.data() + s.size() - end));
  std::uint64_t multiplier = 1;
  if (suffix.empty() || iequals(suffix, "b")) {
    multiplier = 1;
  } else {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix.front())));
    const std::string_view rest = suffix.substr(1);
    if (!(rest.empty() || iequals(rest, "b") || iequals(rest, "ib"))) throw bad("unknown unit");
    switch (unit) {
      case 'K':
        multiplier = 1ULL << 10;
        break;
      case 'M':
        multiplier = 1ULL << 20;
        break;
      case 'G':
        multiplier = 1ULL << 30;
        break;
      case 'T':
        multiplier = 1ULL << 40;
        break;
      default:
        throw bad("unknown unit");
    }
  }
  const double bytes = number * static_cast<double>(multiplier);
  if (!std::isfinite(bytes) || bytes >= 18446744073709551615.0) throw bad("too large");
  if (bytes != std::floor(bytes)) throw bad("not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

double parse_duration_s(std::string_view text, std::string_view flag) {
  const std::string_view s = trim(text);
  auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("{}: invalid duration '{}': {} (examples: 60, 2.5s, 500ms, 2m)",
                                  flag, text, why));
  };
  double number = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (s.empty() || ec != std::errc() || end == s.data()) throw bad("not a number");
  const std::string_view suffix = trim(std::string_view(end, s.data() + s.size() - end));
  double scale = 1;
  if (suffix.empty() || suffix == "s")
    scale = 1;
  else if (suffix == "ms")
    scale = 1e-3;
  else if (suffix == "us")
    scale = 1e-6;
  else if (suffix == "m" || suffix == "min")
    scale = 60;
  else if (suffix == "h")
    scale = 3600;
  else
    throw bad("unknown unit");
  const double seconds = number * scale;
  if (!std::isfinite(seconds) || seconds <= 0) throw bad("must be positive");
  return seconds;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  // {:.3g} switches to scientific notation ("1.02e+03 KiB") once the value rounds to 1000.
  if (value == std::floor(value) || value >= 999.5) {
    return fmt::format("{:.0f} {}", value, kUnits[unit]);
  }
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

std::string with_commas(std::uint64_t count) {
  const std::string digits = std::to_string(count);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace ibscope::units
