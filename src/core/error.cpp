#include "ibscope/core/error.hpp"

#include <fmt/format.h>

#include <cstring>

namespace ibscope {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::kUsage:
      return "usage";
    case ErrorKind::kSystem:
      return "system";
    case ErrorKind::kRemote:
      return "remote";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kVerification:
      return "verification";
    case ErrorKind::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

int exit_status(ErrorKind kind) noexcept { return kind == ErrorKind::kUsage ? 2 : 1; }

SystemError::SystemError(std::string_view what, int errno_value)
    : Error(ErrorKind::kSystem,
            fmt::format("{}: {} (errno {})", what, std::strerror(errno_value), errno_value)),
      errno_(errno_value) {}

SystemError::SystemError(std::string_view what, int errno_value, std::string_view then)
    : Error(ErrorKind::kSystem, fmt::format("{}: {} (errno {}); {}", what,
                                            std::strerror(errno_value), errno_value, then)),
      errno_(errno_value) {}

}  // namespace ibscope
