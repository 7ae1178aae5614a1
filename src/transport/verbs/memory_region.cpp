#include "ibscope/transport/verbs/memory_region.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "ibscope/core/error.hpp"
#include "ibscope/core/memory_budget.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

void dereg_mr(ibv_mr* mr) noexcept { api().dereg_mr(mr); }

std::string memlock_remedy(std::size_t bytes) {
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  if (limit.rlim_cur >= bytes + kLockedOverheadBytes) return {};
  return fmt::format(
      "the locked-memory limit RLIMIT_MEMLOCK is {} and registering {} needs more: raise it "
      "({})",
      units::format_size(limit.rlim_cur), units::format_size(bytes), memlock_raise_hint());
}

namespace {

int access_flags(int access) noexcept {
  int flags = 0;
  if ((access & kLocalWrite) != 0) flags |= IBV_ACCESS_LOCAL_WRITE;
  if ((access & kRemoteWrite) != 0) flags |= IBV_ACCESS_REMOTE_WRITE;
  if ((access & kRemoteRead) != 0) flags |= IBV_ACCESS_REMOTE_READ;
  return flags;
}

std::string errno_text(int err) { return fmt::format("{} (errno {})", std::strerror(err), err); }

}  // namespace

std::string_view to_string(RegistrationMethod method) noexcept {
  switch (method) {
    case RegistrationMethod::kHost:
      return "host";
    case RegistrationMethod::kDmabuf:
      return "dmabuf";
    case RegistrationMethod::kPeermem:
      return "peermem";
  }
  return "?";
}

DeviceRegistrationDecision decide_device_registration(const DeviceRegistrationObserved& seen) {
  if (seen.dmabuf_registered) return {RegistrationMethod::kDmabuf, {}};
  if (seen.reg_mr_registered) return {RegistrationMethod::kPeermem, {}};
  const std::string reg_mr =
      seen.reg_mr_errno != 0 ? errno_text(seen.reg_mr_errno) : std::string("not tried");
  const std::string remedy =
      seen.peermem_loaded
          ? "nvidia-peermem is loaded but refused the range: check dmesg, and that the GPU and "
            "the NIC are on the same host and the memory is cudaMalloc'd"
          : "nvidia-peermem not loaded: modprobe nvidia-peermem, or use a kernel >= 5.12 with "
            "dma-buf support and an open GPU kernel module";
  return {
      std::nullopt,
      fmt::format("cannot register GPU memory with {}: dma-buf {}; ibv_reg_mr on device "
                  "memory {} ({})",
                  seen.device.empty() ? "(no device)" : seen.device,
                  seen.dmabuf_failure.empty() ? "not tried" : seen.dmabuf_failure, reg_mr, remedy)};
}

bool peermem_module_loaded(const std::filesystem::path& sysfs) noexcept {
  std::error_code ec;
  return std::filesystem::exists(sysfs / "module" / "nvidia_peermem", ec) ||
         std::filesystem::exists(sysfs / "module" / "nv_peer_mem", ec);
}

MemoryRegion::MemoryRegion(std::shared_ptr<ProtectionDomain> pd, ibv_mr* mr, void* addr,
                           std::size_t bytes, RegistrationMethod method) noexcept
    : pd_(std::move(pd)), handle_(mr), addr_(addr), bytes_(bytes), method_(method) {}

MemoryRegion MemoryRegion::for_device(std::shared_ptr<ProtectionDomain> pd, void* addr,
                                      std::size_t bytes, int access,
                                      const DeviceRegistrationHooks& hooks) {
  const int flags = access_flags(access);
  DeviceRegistrationObserved seen;
  seen.device = pd->device().name();
  {
    std::string why_not;
    std::optional<gpu::DmabufHandle> dmabuf;
    try {
      dmabuf = hooks.export_dmabuf ? hooks.export_dmabuf(addr, bytes, why_not)
                                   : gpu::export_dmabuf(addr, bytes, why_not);
    } catch (const Error& e) {
      why_not = e.what();
    }
    if (!dmabuf) {
      seen.dmabuf_failure = why_not.empty() ? "export failed" : why_not;
    } else {
      // The iova is the device pointer: work requests and the peer's RDMA address it the same
      // way as host memory. The fd may close after registration: the MR holds its own
      // reference to the dma-buf.
      ibv_mr* mr = api().reg_dmabuf_mr(pd->get(), dmabuf->offset(), bytes,
                                       reinterpret_cast<std::uint64_t>(addr), dmabuf->fd(), flags);
      if (mr != nullptr)
        return MemoryRegion(std::move(pd), mr, addr, bytes, RegistrationMethod::kDmabuf);
      seen.dmabuf_failure = fmt::format("ibv_reg_dmabuf_mr: {}", errno_text(errno));
    }
  }
  ibv_mr* mr = api().reg_mr(pd->get(), addr, bytes, flags);
  if (mr != nullptr) {
    return MemoryRegion(std::move(pd), mr, addr, bytes, RegistrationMethod::kPeermem);
  }
  seen.reg_mr_errno = errno;
  seen.peermem_loaded = hooks.peermem_loaded ? hooks.peermem_loaded() : peermem_module_loaded();
  const auto decision = decide_device_registration(seen);
  throw EnvironmentError(decision.error);
}

MemoryRegion::MemoryRegion(std::shared_ptr<ProtectionDomain> pd, void* addr, std::size_t bytes,
                           int access)
    : pd_(std::move(pd)), addr_(addr), bytes_(bytes) {
  const int flags = access_flags(access);
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
