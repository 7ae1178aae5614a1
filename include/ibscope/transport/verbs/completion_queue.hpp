#pragma once
/// A completion queue (ibv_cq), polled (no completion channel: probes busy-poll like perftest).

#include <cstdint>
#include <memory>

#include "ibscope/core/handle.hpp"
#include "ibscope/transport/verbs/device.hpp"

struct ibv_cq;
struct ibv_wc;

namespace ibscope::verbs {

void destroy_cq(ibv_cq* cq) noexcept;

class CompletionQueue {
 public:
  /// `depth` entries (raised to at least 1). Throws VerbsError (ibv_create_cq).
  static std::shared_ptr<CompletionQueue> create(std::shared_ptr<DeviceContext> device, int depth);

  ibv_cq* get() const noexcept { return handle_.get(); }
  int depth() const noexcept { return depth_; }
  const DeviceContext& device() const noexcept { return *device_; }
  /// Up to `max` completions into `out`; returns how many. Throws VerbsError when
  /// ibv_poll_cq fails (the status of each completion is the caller's to check).
  int poll(int max, ibv_wc* out) const;

 private:
  CompletionQueue(std::shared_ptr<DeviceContext> device, ibv_cq* cq, int depth) noexcept
      : device_(std::move(device)), handle_(cq), depth_(depth) {}
  std::shared_ptr<DeviceContext> device_;
  Handle<ibv_cq*, destroy_cq> handle_;
  int depth_;
};

}  // namespace ibscope::verbs
