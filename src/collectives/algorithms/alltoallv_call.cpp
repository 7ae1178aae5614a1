#include "ibscope/collectives/algorithms/alltoallv_call.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

AlltoallvPrologue::AlltoallvPrologue(std::string_view algorithm, const AlgorithmOptions& options)
    : algorithm_(algorithm), memory_(options.memory), space_(space_of(options)) {}

AlltoallvCall AlltoallvPrologue::begin(const CollectiveArgs& a, transport::Comm& comm) {
  const int p = comm.size();
  if (a.counts == nullptr) {
    throw UsageError(
        fmt::format("alltoallv {}: the call has no counts (CollectiveArgs::counts)", algorithm_));
  }
  const AlltoallvPlan& plan = *a.counts;
  if (plan.send_counts.size() != static_cast<std::size_t>(p) ||
      plan.recv_counts.size() != static_cast<std::size_t>(p)) {
    throw UsageError(fmt::format("alltoallv {}: counts for {} ranks on a {}-rank communicator",
                                 algorithm_, plan.send_counts.size(), p));
  }
  if (a.sendbuf == a.recvbuf && plan.send_total + plan.recv_total > 0) {
    throw UsageError(
        fmt::format("alltoallv {}: no in-place form (send and receive blocks of a "
                    "pair differ in size); use separate buffers",
                    algorithm_));
  }
  if (what_count_ != a.count) {
    what_ = fmt::format("alltoallv {} ({} elements per rank on average)", algorithm_, a.count);
    what_count_ = a.count;
  }
  const AlltoallvCall call{plan, size_of(a.type), static_cast<const std::byte*>(a.sendbuf),
                           static_cast<std::byte*>(a.recvbuf), comm.next_op_seq()};
  const int me = comm.rank();
  if (call.send_bytes(me) > 0) {
    space_.copy(call.recv_block(me), call.send_block(me), call.send_bytes(me));
  }
  return call;
}

}  // namespace ibscope::collectives
