#pragma once
/// The system calls that core/atomic_file.cpp makes to put a file on disk, through one
/// indirection so that a test can observe or fail them below the real implementation (a full
/// disk on the Nth write, a failing fsync of the folder), as transport/verbs/api.hpp does for
/// libibverbs. Unless a test installed a FileApi, each call is the system call itself: the
/// production path is a direct call, not a virtual one.

#include <sys/types.h>

#include <cstddef>

namespace ibscope {

/// The calls, with the system's conventions: -1 and errno on failure. A test derives from it
/// and overrides what it observes or fails; the defaults make the system calls.
class FileApi {
 public:
  FileApi() = default;
  FileApi(const FileApi&) = delete;
  FileApi& operator=(const FileApi&) = delete;
  virtual ~FileApi() = default;

  virtual ssize_t write(int fd, const void* data, std::size_t bytes);
  virtual int fsync(int fd);
  virtual int link(const char* existing, const char* new_path);
  virtual int rename(const char* from, const char* to);
};

/// Installs `replacement` for its lifetime (this process, every thread), restoring the previous
/// one afterwards. For tests and fault hooks; not thread-safe against calls in flight.
class ScopedFileApi {
 public:
  explicit ScopedFileApi(FileApi& replacement) noexcept;
  ScopedFileApi(const ScopedFileApi&) = delete;
  ScopedFileApi& operator=(const ScopedFileApi&) = delete;
  ~ScopedFileApi();

 private:
  FileApi* previous_;
};

/// The calls atomic_file.cpp makes: the installed FileApi's, else the system call directly.
namespace file_calls {
ssize_t write(int fd, const void* data, std::size_t bytes);
int fsync(int fd);
int link(const char* existing, const char* new_path);
int rename(const char* from, const char* to);
}  // namespace file_calls

}  // namespace ibscope
