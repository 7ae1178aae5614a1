#pragma once
/// A registered memory region (ibv_mr) over memory the caller owns and keeps alive, host or
/// GPU memory. Holds its protection domain. Move-only.
///
/// GPU memory (MemoryRegion::for_device) is registered in this order:
///   1. dma-buf: the range is exported with gpu::export_dmabuf and registered with
///      ibv_reg_dmabuf_mr (iova = the device pointer, so work requests and the peer use the
///      pointer as for host memory). Needs a kernel >= 5.12, an RDMA driver with dma-buf
///      support and a GPU driver that exports (the open GPU kernel module).
///   2. peermem: plain ibv_reg_mr on the device pointer, which works when the nvidia-peermem
///      (or the older nv_peer_mem) kernel module is loaded.
///   3. neither: EnvironmentError naming what each step said and the remedy.
/// The decision is decide_device_registration (pure, unit-tested); region.method() records
/// which step registered it.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ibscope/core/handle.hpp"
#include "ibscope/transport/verbs/protection_domain.hpp"

struct ibv_mr;

namespace ibscope::gpu {
class DmabufHandle;
}

namespace ibscope::verbs {

void dereg_mr(ibv_mr* mr) noexcept;

/// Access rights, combined with |. Local read is always granted.
enum Access : int {
  kLocalWrite = 1,
  kRemoteWrite = 2,
  kRemoteRead = 4,
};

/// How a region was registered: host memory with ibv_reg_mr, GPU memory through a dma-buf
/// (ibv_reg_dmabuf_mr), or GPU memory with ibv_reg_mr under nvidia-peermem.
enum class RegistrationMethod { kHost, kDmabuf, kPeermem };

/// "host", "dmabuf", "peermem".
std::string_view to_string(RegistrationMethod method) noexcept;

/// What registering GPU memory observed, step by step: the input of the decision.
struct DeviceRegistrationObserved {
  std::string device;  ///< RDMA device name, for the message
  bool dmabuf_registered = false;
  /// Why the dma-buf step failed: the export's reason ("driver does not support ...") or
  /// "ibv_reg_dmabuf_mr: <strerror> (errno N)".
  std::string dmabuf_failure;
  bool reg_mr_registered = false;
  int reg_mr_errno = 0;         ///< errno of ibv_reg_mr on the device pointer (0: not tried)
  bool peermem_loaded = false;  ///< /sys/module/nvidia_peermem or nv_peer_mem exists
};

/// The method that registered the memory, or the one-line error when none did:
/// "cannot register GPU memory with <device>: dma-buf <why>; ibv_reg_mr on device memory
/// <strerror> (errno N) (<remedy>)". Pure.
struct DeviceRegistrationDecision {
  std::optional<RegistrationMethod> method;
  std::string error;
};
DeviceRegistrationDecision decide_device_registration(const DeviceRegistrationObserved& seen);

/// Whether a GPUDirect peer-memory module (nvidia_peermem, nv_peer_mem) is loaded, from
/// <sysfs>/module. Never throws.
bool peermem_module_loaded(const std::filesystem::path& sysfs = "/sys") noexcept;

/// The two system facts device registration depends on; tests substitute them. Empty
/// functions mean the real ones: gpu::export_dmabuf and peermem_module_loaded().
struct DeviceRegistrationHooks {
  std::function<std::optional<gpu::DmabufHandle>(const void*, std::size_t, std::string&)>
      export_dmabuf;
  std::function<bool()> peermem_loaded;
};

class MemoryRegion {
 public:
  /// Registers [addr, addr + bytes). Throws VerbsError; when the failure is the locked-memory
  /// limit (ENOMEM/EPERM/EAGAIN with RLIMIT_MEMLOCK below `bytes` plus what is locked) the
  /// message says so and how to raise it.
  MemoryRegion(std::shared_ptr<ProtectionDomain> pd, void* addr, std::size_t bytes, int access);

  /// Registers GPU memory [addr, addr + bytes) (a device pointer) in the order above. Throws
  /// EnvironmentError when neither dma-buf nor peermem works (the message names both causes
  /// and the remedy).
  static MemoryRegion for_device(std::shared_ptr<ProtectionDomain> pd, void* addr,
                                 std::size_t bytes, int access,
                                 const DeviceRegistrationHooks& hooks = {});

  ibv_mr* get() const noexcept { return handle_.get(); }
  std::uint32_t lkey() const noexcept;
  std::uint32_t rkey() const noexcept;
  void* addr() const noexcept { return addr_; }
  std::size_t bytes() const noexcept { return bytes_; }
  RegistrationMethod method() const noexcept { return method_; }

 private:
  MemoryRegion(std::shared_ptr<ProtectionDomain> pd, ibv_mr* mr, void* addr, std::size_t bytes,
               RegistrationMethod method) noexcept;
  std::shared_ptr<ProtectionDomain> pd_;
  Handle<ibv_mr*, dereg_mr> handle_;
  void* addr_ = nullptr;
  std::size_t bytes_ = 0;
  RegistrationMethod method_ = RegistrationMethod::kHost;
};

/// "RLIMIT_MEMLOCK is 8 MiB; raise it ..." when `bytes` cannot be locked under the current
/// limit, else empty. Pure apart from getrlimit.
std::string memlock_remedy(std::size_t bytes);

}  // namespace ibscope::verbs
