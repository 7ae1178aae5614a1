#pragma once
/// Memory registered with UCX (ucp_mem_h). Passing the handle with a send or receive spares
/// UCX a registration-cache lookup and, for RMA, gives the rkey peers need.

#include <cstddef>
#include <memory>

#include "ibscope/transport/ucx/context.hpp"

struct ucp_mem;

namespace ibscope::ucx {

class RegisteredMemory {
 public:
  /// Registers [address, address + bytes) (bytes may be 0: then nothing is registered).
  /// Keeps the context alive. Throws SystemError.
  RegisteredMemory(std::shared_ptr<Context> context, void* address, std::size_t bytes);
  ~RegisteredMemory();
  RegisteredMemory(const RegisteredMemory&) = delete;
  RegisteredMemory& operator=(const RegisteredMemory&) = delete;

  ucp_mem* handle() const noexcept { return memh_; }
  void* address() const noexcept { return address_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::shared_ptr<Context> context_;
  void* address_;
  std::size_t bytes_;
  ucp_mem* memh_ = nullptr;
};

}  // namespace ibscope::ucx
