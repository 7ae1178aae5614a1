#include "ibscope/core/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace ibscope::log {
namespace {

std::mutex g_mutex;
std::string g_identity;  // guarded by g_mutex
std::atomic<Level> g_level{Level::kInfo};

std::string_view level_name(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warning";
    case Level::kError:
      return "error";
    case Level::kQuiet:
      return "";
  }
  return "";
}

}  // namespace

void set_identity(int rank, std::string_view host) {
  std::lock_guard lock(g_mutex);
  g_identity = fmt::format("rank {} {}", rank, host);
}

void set_level(Level level) { g_level.store(level); }

void set_level_from_env() {
  const char* v = std::getenv("IBSCOPE_LOG_LEVEL");
  if (v == nullptr || *v == '\0') return;
  const std::string_view s(v);
  if (s == "debug")
    set_level(Level::kDebug);
  else if (s == "info")
    set_level(Level::kInfo);
  else if (s == "warning" || s == "warn")
    set_level(Level::kWarn);
  else if (s == "error")
    set_level(Level::kError);
  else
    write(Level::kWarn, fmt::format("IBSCOPE_LOG_LEVEL='{}' ignored: expected debug, info, "
                                    "warning or error",
                                    s));
}
Level level() { return g_level.load(std::memory_order_relaxed); }

void write(Level level, std::string_view message) {
  std::string line;
  {
    std::lock_guard lock(g_mutex);
    line = g_identity.empty()
               ? fmt::format("ibscope: {}: {}\n", level_name(level), message)
               : fmt::format("ibscope[{}]: {}: {}\n", g_identity, level_name(level), message);
  }
  // One write() per line keeps lines whole when several ranks share a terminal or pipe.
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace ibscope::log
