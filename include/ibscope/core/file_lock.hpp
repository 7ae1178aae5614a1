#pragma once
/// A lock file that says a process is alive: an exclusive flock(2) on it, held for the life of a
/// FileLock, with a line naming the holder (host, pid) in it. The kernel releases a flock when
/// its process dies however it dies (SIGKILL, the OOM killer, an abort), so a lock file that a
/// killed process left behind is free again: only a live holder blocks. Across hosts the lock
/// works where the file system implements flock (local file systems, NFS); where it does not
/// (a Lustre mount without -o flock), acquire() throws and a caller can go on unlocked.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ibscope {

class FileLock {
 public:
  /// Holds nothing.
  FileLock() noexcept = default;
  /// Creates `path` (or opens one a dead holder left), locks it without waiting and writes
  /// `holder` and a newline into it. Throws SystemError (EWOULDBLOCK: a live process holds it).
  static FileLock acquire(const std::filesystem::path& path, std::string_view holder);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  /// release().
  ~FileLock();

  /// Removes the lock file and releases the lock; nothing when it holds none. Never throws.
  void release() noexcept;
  bool held() const noexcept { return fd_ >= 0; }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  FileLock(std::filesystem::path path, int fd) noexcept : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

/// The holder line of the lock at `path` while a live process holds it ("(not written yet)" in
/// the instant between its lock and its write); nullopt when there is no such file or nobody
/// holds it (its holder died or released it). Throws SystemError when the file exists but
/// cannot be opened or tested.
std::optional<std::string> live_lock_holder(const std::filesystem::path& path);

}  // namespace ibscope
