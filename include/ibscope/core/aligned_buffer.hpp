#pragma once
/// A page-aligned heap buffer (move-only). Page alignment keeps vector loads aligned and lets
/// transports register the memory without partial pages.

#include <cstddef>
#include <memory>

namespace ibscope {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  /// Allocates `bytes` (0 allowed) aligned to 4096 and touches every page, so that first-touch
  /// page faults land before timing. Throws SystemError(ENOMEM) naming the size.
  explicit AlignedBuffer(std::size_t bytes);

  std::byte* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace ibscope
