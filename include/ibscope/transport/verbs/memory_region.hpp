#pragma once
/// A registered memory region (ibv_mr) over memory the caller owns and keeps alive. Holds its
/// protection domain. Move-only.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ibscope/core/handle.hpp"
#include "ibscope/transport/verbs/protection_domain.hpp"

struct ibv_mr;

namespace ibscope::verbs {

void dereg_mr(ibv_mr* mr) noexcept;

/// Access rights, combined with |. Local read is always granted.
enum Access : int {
  kLocalWrite = 1,
  kRemoteWrite = 2,
  kRemoteRead = 4,
};

class MemoryRegion {
 public:
  /// Registers [addr, addr + bytes). Throws VerbsError; when the failure is the locked-memory
  /// limit (ENOMEM/EPERM/EAGAIN with RLIMIT_MEMLOCK below `bytes` plus what is locked) the
  /// message says so and how to raise it.
  MemoryRegion(std::shared_ptr<ProtectionDomain> pd, void* addr, std::size_t bytes, int access);

  ibv_mr* get() const noexcept { return handle_.get(); }
  std::uint32_t lkey() const noexcept;
  std::uint32_t rkey() const noexcept;
  void* addr() const noexcept { return addr_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::shared_ptr<ProtectionDomain> pd_;
  Handle<ibv_mr*, dereg_mr> handle_;
  void* addr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// "RLIMIT_MEMLOCK is 8 MiB; raise it ..." when `bytes` cannot be locked under the current
/// limit, else empty. Pure apart from getrlimit.
std::string memlock_remedy(std::size_t bytes);

}  // namespace ibscope::verbs
