#include "ibscope/core/fd_limit.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "ibscope/core/log.hpp"

namespace ibscope {
namespace {

std::uint64_t from_rlim(rlim_t v) { return v == RLIM_INFINITY ? kUnlimitedFds : v; }

// fs.nr_open: the kernel refuses a soft or hard limit above it (EPERM), also for root.
std::uint64_t nr_open() noexcept {
  std::ifstream in("/proc/sys/fs/nr_open");
  std::uint64_t n = 0;
  if (in >> n && n > 0) return n;
  return 1u << 20;  // the kernel's default
}

}  // namespace

FdLimit fd_limit() noexcept {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return {};
  return {from_rlim(lim.rlim_cur), from_rlim(lim.rlim_max)};
}

std::uint64_t fd_limit_target(FdLimit now, std::uint64_t nr_open) noexcept {
  return std::max(now.soft, std::min(now.hard, nr_open));
}

FdLimit raise_fd_limit() noexcept {
  const FdLimit before = fd_limit();
  const std::uint64_t target = fd_limit_target(before, nr_open());
  if (target <= before.soft) {
    log::debug("open-file limit (RLIMIT_NOFILE): soft {} is already at the hard limit {}",
               fd_count_text(before.soft), fd_count_text(before.hard));
    return before;
  }
  rlimit lim{};
  lim.rlim_cur = static_cast<rlim_t>(target);
  lim.rlim_max = before.hard == kUnlimitedFds ? RLIM_INFINITY : static_cast<rlim_t>(before.hard);
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    const int err = errno;
    log::debug("open-file limit (RLIMIT_NOFILE): could not raise the soft limit from {} to {}: {}",
               fd_count_text(before.soft), target, std::strerror(err));
    return before;
  }
  log::debug("open-file limit (RLIMIT_NOFILE): raised the soft limit from {} to {} (hard limit {})",
             fd_count_text(before.soft), target, fd_count_text(before.hard));
  return fd_limit();
}

std::string fd_count_text(std::uint64_t n) {
  return n == kUnlimitedFds ? std::string("unlimited") : std::to_string(n);
}

}  // namespace ibscope
