#include "ibscope/core/aligned_buffer.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "ibscope/core/error.hpp"

namespace ibscope {

void AlignedBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

AlignedBuffer::AlignedBuffer(std::size_t bytes) : size_(bytes) {
  void* p = nullptr;
  const int rc = ::posix_memalign(&p, 4096, bytes == 0 ? 4096 : bytes);
  if (rc != 0) throw SystemError(fmt::format("cannot allocate a {} byte buffer", bytes), rc);
  std::memset(p, 0, bytes);
  data_.reset(static_cast<std::byte*>(p));
}

}  // namespace ibscope
