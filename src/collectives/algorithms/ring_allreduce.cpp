#include "ibscope/collectives/algorithms/ring_allreduce.hpp"

#include <fmt/format.h>

#include "ibscope/collectives/algorithms/without_peers.hpp"

namespace ibscope::collectives {

RingAllreduce::RingAllreduce(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), pipeline_(comm, options) {}

void RingAllreduce::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  if (allreduce_without_peers(a, comm_.size(), pipeline_.space())) return;
  if (what_count_ != a.count) {
    what_ = fmt::format("allreduce ring ({} elements)", a.count);
    what_count_ = a.count;
  }
  RingPipeline::Plan plan;
  plan.vrank = comm_.rank();
  plan.rs_steps = p - 1;
  plan.ag_steps = p - 1;
  plan.in = a.sendbuf;
  plan.work = a.recvbuf;
  pipeline_.run(plan, a.count, a.type, a.op, deadline, what_);
}

}  // namespace ibscope::collectives
