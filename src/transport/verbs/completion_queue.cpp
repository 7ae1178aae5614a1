#include "ibscope/transport/verbs/completion_queue.hpp"

#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>

#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

void destroy_cq(ibv_cq* cq) noexcept { api().destroy_cq(cq); }

std::shared_ptr<CompletionQueue> CompletionQueue::create(std::shared_ptr<DeviceContext> device,
                                                         int depth) {
  depth = std::max(depth, 1);
  ibv_cq* cq = api().create_cq(device->get(), depth);
  if (cq == nullptr) {
    throw VerbsError("ibv_create_cq", device->name(), errno, "depth " + std::to_string(depth));
  }
  return std::shared_ptr<CompletionQueue>(new CompletionQueue(std::move(device), cq, cq->cqe));
}

int CompletionQueue::poll(int max, ibv_wc* out) const {
  const int n = api().poll_cq(get(), max, out);
  if (n < 0) throw VerbsError("ibv_poll_cq", device_->name(), n == -1 ? EIO : -n);
  return n;
}

}  // namespace ibscope::verbs
