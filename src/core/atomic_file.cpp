#include "ibscope/core/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "ibscope/core/error.hpp"
#include "ibscope/core/random_hex.hpp"

namespace ibscope {

void write_file_exclusive(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp =
      path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw SystemError(fmt::format("cannot create {}", tmp.string()), errno);
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw SystemError(fmt::format("cannot write {}", tmp.string()), e);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot flush {}", tmp.string()), e);
  }
  // link() fails with EEXIST instead of replacing: an existing file is never overwritten.
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot create {}", path.string()), e);
  }
  ::unlink(tmp.c_str());
}

void write_file_replacing(const std::filesystem::path& path, const std::string& content) {
  // The temp name starts with a dot: node-exporter's textfile collector reads *.prom only.
  const std::filesystem::path tmp =
      path.parent_path() /
      fmt::format(".{}.new.{}.{}", path.filename().string(), ::getpid(), random_hex(6));
  write_file_exclusive(tmp, content);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot replace {}", path.string()), e);
  }
}

}  // namespace ibscope
