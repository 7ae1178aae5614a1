// DmabufHandle owns a file descriptor; the same in builds with and without CUDA.

#include <unistd.h>

#include <utility>

#include "ibscope/gpu/cuda.hpp"

namespace ibscope::gpu {

DmabufHandle::DmabufHandle(DmabufHandle&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), offset_(std::exchange(other.offset_, 0)) {}

DmabufHandle& DmabufHandle::operator=(DmabufHandle&& other) noexcept {
  if (this != &other) {
    DmabufHandle old(std::move(*this));
    fd_ = std::exchange(other.fd_, -1);
    offset_ = std::exchange(other.offset_, 0);
  }
  return *this;
}

DmabufHandle::~DmabufHandle() {
  // A registered memory region keeps its own reference to the dma-buf: closing here is safe
  // once ibv_reg_dmabuf_mr has returned.
  if (fd_ >= 0) (void)::close(fd_);
}

}  // namespace ibscope::gpu
