#include "ibscope/collectives/scratch.hpp"

namespace ibscope::collectives {

Scratch::Scratch(std::shared_ptr<memory::MemorySpace> space)
    : space_(space ? std::move(space) : memory::host_space()) {}

void Scratch::reserve(std::size_t bytes) {
  if (buffer_.size() >= bytes) return;
  buffer_ = memory::SpaceBuffer();  // release first: device memory may not hold both
  buffer_ = space_->allocate(bytes);
}

}  // namespace ibscope::collectives
