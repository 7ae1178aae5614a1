#include "ibscope/collectives/algorithms/ring_reduce_scatter.hpp"

#include <fmt/format.h>

#include <cstring>

namespace ibscope::collectives {

double ring_reduce_scatter_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const double pm1 = p - 1;
  return pm1 * c.alpha_s + pm1 / p * n * (c.beta_s_per_byte + c.gamma_s_per_byte);
}

RingReduceScatter::RingReduceScatter(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), pipeline_(comm, options), work_(options.memory) {}

void RingReduceScatter::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  const std::size_t es = size_of(a.type);
  const pattern::Span mine = block_of(a.count, p, me);
  if (p == 1 || a.count == 0) {
    if (a.sendbuf != a.recvbuf && a.count > 0) {
      pipeline_.space().copy(a.recvbuf, a.sendbuf, a.count * es);
    }
    return;
  }
  work_.reserve(a.count * es);
  if (what_count_ != a.count) {
    what_ = fmt::format("reduce_scatter ring ({} elements)", a.count);
    what_count_ = a.count;
  }
  RingPipeline::Plan plan;
  plan.vrank = pattern::ring_prev(me, p);  // so that the block left on rank r is block r
  plan.rs_steps = p - 1;
  plan.in = a.sendbuf;
  plan.work = work_.data();
  plan.last_out = a.recvbuf;
  plan.last_out_offset = mine.offset;
  pipeline_.run(plan, a.count, a.type, a.op, deadline, what_);
}

}  // namespace ibscope::collectives
