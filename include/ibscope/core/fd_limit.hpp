#pragma once
/// The process's limit on open files (RLIMIT_NOFILE). Many systems start a shell with a soft
/// limit of 1024 and a hard limit far above it; rank 0's TCP store holds one descriptor per
/// rank, and the local launcher two pipes per rank, so every ibscope process raises its soft
/// limit to the hard one when it starts (issue 35). ibscope never uses select(2), the reason
/// the soft default is low.

#include <cstdint>
#include <string>

namespace ibscope {

/// A limit of descriptors; kUnlimitedFds where the kernel reports RLIM_INFINITY.
inline constexpr std::uint64_t kUnlimitedFds = ~std::uint64_t{0};

struct FdLimit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};

/// The current limit. Never throws ({0, 0} if getrlimit fails, which it does not on Linux).
FdLimit fd_limit() noexcept;

/// The soft limit to ask for: the hard limit, or `nr_open` (fs.nr_open, the most the kernel
/// lets a process open) when the hard limit is higher or unlimited. Pure.
std::uint64_t fd_limit_target(FdLimit now, std::uint64_t nr_open) noexcept;

/// Raises the soft limit to fd_limit_target() and returns the limit then in force. Logs what it
/// did (or why it could not) at debug level. Never throws: on failure the limit stays as it was.
FdLimit raise_fd_limit() noexcept;

/// "1024", or "unlimited".
std::string fd_count_text(std::uint64_t n);

}  // namespace ibscope
