#include "ibscope/memory/shm_segment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"

namespace ibscope::memory {
namespace {

// Closes the descriptor on every path; the mapping keeps the segment alive.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::byte* map_shared(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    throw SystemError(
        fmt::format("mmap of shared segment {} ({})", name, units::format_size(bytes)), errno);
  }
  return static_cast<std::byte*>(p);
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& name, std::size_t bytes) {
  if (bytes == 0) throw UsageError("ShmSegment::create: a segment of 0 bytes");
  Fd f{::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)};
  if (f.fd < 0) throw SystemError(fmt::format("shm_open of {} (create)", name), errno);
  // From here the name exists: remove it on every failure.
  const auto fail = [&](const std::string& what, int err) {
    ::shm_unlink(name.c_str());
    throw SystemError(what, err);
  };
  if (::ftruncate(f.fd, static_cast<off_t>(bytes)) != 0) {
    fail(fmt::format("ftruncate of shared segment {} to {}", name, units::format_size(bytes)),
         errno);
  }
  if (const int err = ::posix_fallocate(f.fd, 0, static_cast<off_t>(bytes)); err != 0) {
    fail(fmt::format("reserving {} for shared segment {} in /dev/shm (df -h /dev/shm; a "
                     "container's default is 64 MiB: docker --shm-size)",
                     units::format_size(bytes), name),
         err);
  }
  std::byte* data = nullptr;
  try {
    data = map_shared(f.fd, bytes, name);
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
  // Touch every page now (they are already reserved), so first-touch faults land before timing.
  const long page = ::sysconf(_SC_PAGESIZE);
  for (std::size_t off = 0; off < bytes; off += static_cast<std::size_t>(page)) data[off] = {};
  return ShmSegment(name, data, bytes, true);
}

ShmSegment ShmSegment::open(const std::string& name, std::size_t bytes) {
  Fd f{::shm_open(name.c_str(), O_RDWR, 0600)};
  if (f.fd < 0) throw SystemError(fmt::format("shm_open of {}", name), errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw SystemError(fmt::format("fstat of {}", name), errno);
  if (static_cast<std::size_t>(st.st_size) != bytes) {
    throw RemoteError(
        fmt::format("shared segment {} is {} bytes, expected {}: a local peer "
                    "allocated a different size",
                    name, st.st_size, bytes));
  }
  return ShmSegment(name, map_shared(f.fd, bytes, name), bytes, false);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : name_(std::move(o.name_)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      owner_(std::exchange(o.owner_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    release();
    name_ = std::move(o.name_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    owner_ = std::exchange(o.owner_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::unlink() noexcept {
  if (owner_) ::shm_unlink(name_.c_str());
  owner_ = false;
}

void ShmSegment::release() noexcept {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace ibscope::memory
