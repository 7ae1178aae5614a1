#include "ibscope/collectives/algorithms/alltoallv_call.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::collectives {

const AlltoallvPlan& alltoallv_plan_of(const CollectiveArgs& a, int p, std::string_view algorithm) {
  if (a.counts == nullptr) {
    throw UsageError(
        fmt::format("alltoallv {}: the call has no counts (CollectiveArgs::counts)", algorithm));
  }
  const AlltoallvPlan& plan = *a.counts;
  if (plan.send_counts.size() != static_cast<std::size_t>(p) ||
      plan.recv_counts.size() != static_cast<std::size_t>(p)) {
    throw UsageError(fmt::format("alltoallv {}: counts for {} ranks on a {}-rank communicator",
                                 algorithm, plan.send_counts.size(), p));
  }
  if (a.sendbuf == a.recvbuf && plan.send_total + plan.recv_total > 0) {
    throw UsageError(
        fmt::format("alltoallv {}: no in-place form (send and receive blocks of a "
                    "pair differ in size); use separate buffers",
                    algorithm));
  }
  return plan;
}

void alltoallv_own_block(const CollectiveArgs& a, const AlltoallvPlan& plan, int rank,
                         memory::MemorySpace& space) {
  const auto me = static_cast<std::size_t>(rank);
  const std::size_t bytes = plan.send_counts[me] * size_of(a.type);
  if (bytes == 0) return;
  const std::size_t es = size_of(a.type);
  space.copy(static_cast<std::byte*>(a.recvbuf) + plan.recv_offsets[me] * es,
             static_cast<const std::byte*>(a.sendbuf) + plan.send_offsets[me] * es, bytes);
}

}  // namespace ibscope::collectives
