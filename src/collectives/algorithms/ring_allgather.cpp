#include "ibscope/collectives/algorithms/ring_allgather.hpp"

#include <fmt/format.h>

#include <cstring>

namespace ibscope::collectives {

double ring_allgather_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const double pm1 = p - 1;
  return pm1 * c.alpha_s + pm1 / p * n * c.beta_s_per_byte;
}

RingAllgather::RingAllgather(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), pipeline_(comm, options) {}

void RingAllgather::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  const std::size_t es = size_of(a.type);
  const pattern::Span mine = block_of(a.count, p, me);
  auto* own_slot = static_cast<std::byte*>(a.recvbuf) + mine.offset * es;
  // Out of place, the own block is copied into the output (a local copy, as every all-gather
  // does); the ring never sends from the output's own block, so the copy may run first.
  if (a.sendbuf != own_slot && mine.count > 0) {
    pipeline_.space().copy(own_slot, a.sendbuf, mine.count * es);
  }
  if (p == 1 || a.count == 0) return;
  if (what_count_ != a.count) {
    what_ = fmt::format("allgather ring ({} elements)", a.count);
    what_count_ = a.count;
  }
  RingPipeline::Plan plan;
  plan.vrank = pattern::ring_prev(me, p);  // so that step 0 sends block r
  plan.ag_steps = p - 1;
  plan.work = a.recvbuf;
  plan.first_in = a.sendbuf;
  plan.first_in_offset = mine.offset;
  pipeline_.run(plan, a.count, a.type, a.op, deadline, what_);
}

}  // namespace ibscope::collectives
