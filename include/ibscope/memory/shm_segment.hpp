#pragma once
/// A POSIX shared-memory segment (shm_open + mmap), move-only. The creator reserves every page
/// with posix_fallocate, so a full /dev/shm is an error naming the size here, not a SIGBUS at
/// the first touch later; it also touches every page, like AlignedBuffer, so that page faults
/// land before timing. unlink() removes the name (the mapping stays valid): the intra-host
/// arena unlinks as soon as every local peer has mapped, so a crash leaves nothing in /dev/shm.

#include <cstddef>
#include <string>

namespace ibscope::memory {

class ShmSegment {
 public:
  ShmSegment() = default;
  /// Creates `name` ("/ibscope-...", exclusive) of `bytes` (> 0), mapped read-write.
  /// Throws SystemError naming the segment, the size and /dev/shm when it cannot.
  static ShmSegment create(const std::string& name, std::size_t bytes);
  /// Maps an existing segment, which must be exactly `bytes` long. Throws SystemError (ENOENT
  /// when it does not exist) or RemoteError when its size differs.
  static ShmSegment open(const std::string& name, std::size_t bytes);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& name() const noexcept { return name_; }
  /// Removes the name from /dev/shm if this handle created it and has not yet removed it.
  /// The mapping stays. noexcept: an already-removed name is not an error.
  void unlink() noexcept;

 private:
  ShmSegment(std::string name, std::byte* data, std::size_t size, bool owner) noexcept
      : name_(std::move(name)), data_(data), size_(size), owner_(owner) {}
  void release() noexcept;

  std::string name_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool owner_ = false;  // created it and has not unlinked it yet
};

}  // namespace ibscope::memory
