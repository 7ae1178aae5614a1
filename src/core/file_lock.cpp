#include "ibscope/core/file_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "ibscope/core/error.hpp"

namespace ibscope {

FileLock FileLock::acquire(const std::filesystem::path& path, std::string_view holder) {
  // O_CLOEXEC: a flock belongs to the open file, which a child started with exec would share
  // and keep alive after this process died.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw SystemError(fmt::format("cannot create the lock file {}", path.string()), errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    throw SystemError(fmt::format("cannot lock {}", path.string()), e);
  }
  FileLock lock(path, fd);  // from here on, released (and removed) on every way out
  const std::string line = std::string(holder) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    throw SystemError(fmt::format("cannot write the lock file {}", path.string()), errno);
  }
  return lock;
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() noexcept {
  if (fd_ < 0) return;
  // Removed while still locked: no other process can take a lock file that is about to vanish.
  ::unlink(path_.c_str());
  ::close(std::exchange(fd_, -1));
}

std::optional<std::string> live_lock_holder(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw SystemError(fmt::format("cannot open the lock file {}", path.string()), errno);
  }
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::close(fd);  // free: whoever wrote it is gone
    return std::nullopt;
  }
  const int e = errno;
  if (e != EWOULDBLOCK) {
    ::close(fd);
    throw SystemError(fmt::format("cannot test the lock file {}", path.string()), e);
  }
  std::string text(512, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  if (text.empty()) return std::string("(not written yet)");
  return text;
}

}  // namespace ibscope
