#pragma once
/// An algorithm's working memory, in the same memory space as the collective's buffers (device
/// memory when they are on a GPU: received chunks are reduced there by the space's kernels).
/// Grows on demand and never shrinks, so timed iterations allocate nothing.

#include <cstddef>
#include <memory>

#include "ibscope/memory/memory_space.hpp"

namespace ibscope::collectives {

class Scratch {
 public:
  /// `space` null: host memory.
  explicit Scratch(std::shared_ptr<memory::MemorySpace> space);

  /// At least `bytes` from now on (contents are not kept when it grows).
  void reserve(std::size_t bytes);
  std::byte* data() const noexcept { return buffer_.data(); }
  std::size_t size() const noexcept { return buffer_.size(); }
  memory::MemorySpace& space() const noexcept { return *space_; }

 private:
  std::shared_ptr<memory::MemorySpace> space_;
  memory::SpaceBuffer buffer_;
};

}  // namespace ibscope::collectives
