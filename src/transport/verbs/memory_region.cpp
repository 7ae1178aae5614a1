#include "ibscope/transport/verbs/memory_region.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <sys/resource.h>

#include <cerrno>

#include "ibscope/core/units.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

void dereg_mr(ibv_mr* mr) noexcept { api().dereg_mr(mr); }

std::string memlock_remedy(std::size_t bytes) {
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  if (limit.rlim_cur >= bytes + (64u << 20)) return {};
  return fmt::format(
      "the locked-memory limit RLIMIT_MEMLOCK is {} and registering {} needs more: raise it "
      "('ulimit -l unlimited', 'memlock unlimited' in /etc/security/limits.conf, or "
      "LimitMEMLOCK=infinity for slurmd/containers)",
      units::format_size(limit.rlim_cur), units::format_size(bytes));
}

MemoryRegion::MemoryRegion(std::shared_ptr<ProtectionDomain> pd, void* addr, std::size_t bytes,
                           int access)
    : pd_(std::move(pd)), addr_(addr), bytes_(bytes) {
  int flags = 0;
  if ((access & kLocalWrite) != 0) flags |= IBV_ACCESS_LOCAL_WRITE;
  if ((access & kRemoteWrite) != 0) flags |= IBV_ACCESS_REMOTE_WRITE;
  if ((access & kRemoteRead) != 0) flags |= IBV_ACCESS_REMOTE_READ;
  ibv_mr* mr = api().reg_mr(pd_->get(), addr, bytes, flags);
  if (mr == nullptr) {
    const int err = errno;
    const bool memlock = err == ENOMEM || err == EPERM || err == EAGAIN;
    throw VerbsError("ibv_reg_mr", pd_->device().name(), err,
                     fmt::format("{} at {}", units::format_size(bytes), addr),
                     memlock ? memlock_remedy(bytes) : std::string());
  }
  handle_ = Handle<ibv_mr*, dereg_mr>(mr);
}

std::uint32_t MemoryRegion::lkey() const noexcept { return handle_.get()->lkey; }
std::uint32_t MemoryRegion::rkey() const noexcept { return handle_.get()->rkey; }

}  // namespace ibscope::verbs
