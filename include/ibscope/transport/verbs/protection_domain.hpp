#pragma once
/// A protection domain (ibv_pd). Holds its device, so the device outlives every PD; memory
/// regions and queue pairs hold the PD in turn.

#include <memory>

#include "ibscope/core/handle.hpp"
#include "ibscope/transport/verbs/device.hpp"

struct ibv_pd;

namespace ibscope::verbs {

void dealloc_pd(ibv_pd* pd) noexcept;

class ProtectionDomain {
 public:
  /// Throws VerbsError (ibv_alloc_pd).
  static std::shared_ptr<ProtectionDomain> create(std::shared_ptr<DeviceContext> device);

  ibv_pd* get() const noexcept { return handle_.get(); }
  const DeviceContext& device() const noexcept { return *device_; }
  const std::shared_ptr<DeviceContext>& device_ptr() const noexcept { return device_; }

 private:
  ProtectionDomain(std::shared_ptr<DeviceContext> device, ibv_pd* pd) noexcept
      : device_(std::move(device)), handle_(pd) {}
  std::shared_ptr<DeviceContext> device_;  // declared first: destroyed after the PD
  Handle<ibv_pd*, dealloc_pd> handle_;
};

}  // namespace ibscope::verbs
