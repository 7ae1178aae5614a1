#pragma once
/// UCX worker (ucp_worker_h), single-threaded: progress engine and the address peers need.

#include <memory>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/handle.hpp"
#include "ibscope/transport/ucx/context.hpp"

struct ucp_worker;

namespace ibscope::ucx {

void destroy_worker(ucp_worker* worker) noexcept;

class Worker {
 public:
  /// Keeps the context alive (children hold their parent). Throws SystemError.
  explicit Worker(std::shared_ptr<Context> context);

  ucp_worker* get() const noexcept { return handle_.get(); }
  /// The worker's address, to be sent to peers over the bootstrap.
  bootstrap::Bytes address() const;
  /// One round of progress; returns true if something happened.
  bool progress() noexcept;

 private:
  std::shared_ptr<Context> context_;
  Handle<ucp_worker*, destroy_worker> handle_;
};

}  // namespace ibscope::ucx
