#include "ibscope/core/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "ibscope/core/error.hpp"
#include "ibscope/core/file_api.hpp"
#include "ibscope/core/random_hex.hpp"

namespace ibscope {
namespace {

namespace fs = std::filesystem;

// Creates `tmp` (which must not exist), writes `content` and fsyncs it. On an error nothing is
// left under `tmp`.
void write_flushed(const fs::path& tmp, const std::string& content) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw SystemError(fmt::format("cannot create {}", tmp.string()), errno);
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = file_calls::write(fd, p, left);
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
  if (file_calls::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot flush {}", tmp.string()), e);
  }
}

// The folder that holds `path`, for open(2).
fs::path folder_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// fsync(2) of the file's data does not make its name durable: a crash of the host after link()
// or rename() returned can still lose the new entry, and with it a file reported written. The
// folder's own fsync does. Returns 0 or the errno. A folder that offers no way to flush it is not
// an error (as PostgreSQL's fsync_fname has it): one that cannot be opened for reading (mode
// 0333) and a file system that does not fsync folders (EINVAL, ENOTSUP).
int flush_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno == EACCES ? 0 : errno;
  int e = file_calls::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  if (e == EINVAL || e == EOPNOTSUPP) e = 0;  // EOPNOTSUPP is ENOTSUP on Linux
  return e;
}

}  // namespace

void write_file_exclusive(const fs::path& path, const std::string& content) {
  const fs::path tmp =
      path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  write_flushed(tmp, content);
  // link() fails with EEXIST instead of replacing: an existing file is never overwritten.
  if (file_calls::link(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot create {}", path.string()), e);
  }
  ::unlink(tmp.c_str());
  // After the unlink: one fsync makes both the new name and the temp name's removal durable.
  if (const int e = flush_folder(folder_of(path)); e != 0) {
    // Not reported written, so not left in place: the caller may write it again (elsewhere).
    ::unlink(path.c_str());
    throw SystemError(fmt::format("cannot flush the folder {} after creating {} in it (removed)",
                                  folder_of(path).string(), path.filename().string()),
                      e);
  }
}

void write_file_replacing(const fs::path& path, const std::string& content) {
  // The temp name starts with a dot: node-exporter's textfile collector reads *.prom only.
  const fs::path tmp = path.parent_path() / fmt::format(".{}.new.{}.{}", path.filename().string(),
                                                        ::getpid(), random_hex(6));
  write_flushed(tmp, content);
  if (file_calls::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot replace {}", path.string()), e);
  }
  if (const int e = flush_folder(folder_of(path)); e != 0) {
    throw SystemError(
        fmt::format("cannot flush the folder {} after replacing {} in it (the new content is in "
                    "place, but a crash of the host may bring the old one back)",
                    folder_of(path).string(), path.filename().string()),
        e);
  }
}

}  // namespace ibscope
