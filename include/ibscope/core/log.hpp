#pragma once
/// Logging to stderr with fmt. Every line carries the rank and host once the bootstrap has
/// said who we are, so that a line forwarded from any node names where it came from.

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace ibscope::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kQuiet = 4 };

/// Sets the prefix identity (after bootstrap). Thread-safe.
void set_identity(int rank, std::string_view host);
void set_level(Level level);
/// IBSCOPE_LOG_LEVEL=debug|info|warning|error, when set (an unknown value is warned about).
void set_level_from_env();
Level level();

/// Writes one line "ibscope[rank N host]: <level>: message" to stderr, atomically.
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kDebug) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kInfo) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kWarn) write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ibscope::log
