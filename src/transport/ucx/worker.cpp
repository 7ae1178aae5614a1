#include "ibscope/transport/ucx/worker.hpp"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include "ibscope/core/error.hpp"

namespace ibscope::ucx {

void destroy_worker(ucp_worker* worker) noexcept { ucp_worker_destroy(worker); }

Worker::Worker(std::shared_ptr<Context> context) : context_(std::move(context)) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h w = nullptr;
  const ucs_status_t st = ucp_worker_create(context_->get(), &params, &w);
  if (st != UCS_OK) {
    throw Error(ErrorKind::kSystem, fmt::format("ucp_worker_create: {}", ucs_status_string(st)));
  }
  handle_ = Handle<ucp_worker*, destroy_worker>(w);
}

bootstrap::Bytes Worker::address() const {
  ucp_address_t* addr = nullptr;
  std::size_t len = 0;
  const ucs_status_t st = ucp_worker_get_address(handle_.get(), &addr, &len);
  if (st != UCS_OK) {
    throw Error(ErrorKind::kSystem,
                fmt::format("ucp_worker_get_address: {}", ucs_status_string(st)));
  }
  const auto* p = reinterpret_cast<const std::byte*>(addr);
  bootstrap::Bytes out(p, p + len);
  ucp_worker_release_address(handle_.get(), addr);
  return out;
}

bool Worker::progress() noexcept { return ucp_worker_progress(handle_.get()) != 0; }

}  // namespace ibscope::ucx
