#include "ibscope/collectives/algorithms/hier_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/collectives/algorithms/hier_arena.hpp"
#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

using intra_host::Phase;

HierAllreduce::HierAllreduce(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), arena_(hier_arena(options, "-A ring, tree or dbt")), inter_(comm, options) {
  const auto& pl = arena_->placement();
  for (int h = 0; h < pl.hosts; ++h) rail_.push_back(pl.rail_rank_of(h));
}

void HierAllreduce::reduce_local_block(const CollectiveArgs& a, pattern::Span block) {
  const auto& pl = arena_->placement();
  memory::MemorySpace& space = inter_.space();
  const std::size_t es = size_of(a.type);
  const auto* send = static_cast<const std::byte*>(a.sendbuf) + block.offset * es;
  auto* out = static_cast<std::byte*>(a.recvbuf) + block.offset * es;
  if (pl.local_size == 1) {
    if (a.sendbuf != a.recvbuf) space.copy(out, send, block.count * es);
    return;
  }
  const std::size_t chunk = std::max<std::size_t>(1, kLocalChunkBytes / es);
  for (std::size_t done = 0; done < block.count; done += chunk) {
    const std::size_t n = std::min(chunk, block.count - done);
    const std::size_t at = done * es;
    // out = own input op the first peer's, then out op each further peer's. The own input
    // comes first because in place it *is* out, overwritten by the first reduction.
    const int first = pl.local_index == 0 ? 1 : 0;
    space.reduce(a.type, a.op, out + at, send + at, arena_->peer(first, send + at), n);
    for (int j = first + 1; j < pl.local_size; ++j) {
      if (j == pl.local_index) continue;
      space.reduce(a.type, a.op, out + at, out + at, arena_->peer(j, send + at), n);
    }
  }
}

void HierAllreduce::run_small(const CollectiveArgs& a, const Deadline& deadline) {
  const auto& pl = arena_->placement();
  memory::MemorySpace& space = inter_.space();
  const std::size_t bytes = a.count * size_of(a.type);
  const std::uint64_t seq = arena_->next_seq();
  // Slot seq % 2 was last read by the peers in call seq - 2; each of them has finished that
  // call once it arrived at seq - 1 (usually long ago).
  if (seq > 2) arena_->wait_local(Phase::kArrived, seq - 1, what_, deadline);
  std::byte* mine = arena_->slot(pl.local_index, seq);
  space.copy(mine, a.sendbuf, bytes);
  arena_->signal(Phase::kArrived, seq);
  arena_->wait_local(Phase::kArrived, seq, what_, deadline);
  // Every rank folds every input, in local-rank order, so that every rank's output is the
  // same bits. The input is already in the slot, so in place may overwrite it.
  auto* out = static_cast<std::byte*>(a.recvbuf);
  space.reduce(a.type, a.op, out, arena_->slot(0, seq), arena_->slot(1, seq), a.count);
  for (int j = 2; j < pl.local_size; ++j) {
    space.reduce(a.type, a.op, out, out, arena_->slot(j, seq), a.count);
  }
}

void HierAllreduce::run(const CollectiveArgs& a, const Deadline& deadline) {
  if (allreduce_without_peers(a, comm_.size(), inter_.space())) return;
  if (what_count_ != a.count) {
    what_ = fmt::format("allreduce hier ({} elements)", a.count);
    what_count_ = a.count;
  }
  const std::size_t es = size_of(a.type);
  const std::size_t bytes = a.count * es;
  if (!arena_->contains(a.sendbuf, bytes) || !arena_->contains(a.recvbuf, bytes)) {
    throw UsageError(fmt::format("{}: the buffers are not in the intra-host arena", what_));
  }
  const auto& pl = arena_->placement();
  if (pl.hosts == 1 && pl.local_size > 1 && bytes <= intra_host::LocalArena::kSlotBytes) {
    run_small(a, deadline);
    return;
  }
  const pattern::Span mine = block_of(a.count, pl.local_size, pl.local_index);
  const std::uint64_t seq = arena_->next_seq();

  arena_->signal(Phase::kArrived, seq);
  arena_->wait_local(Phase::kArrived, seq, what_, deadline);
  reduce_local_block(a, mine);

  if (pl.hosts > 1) {
    // Every rank runs the rail's ring, an empty block included, so that every rank draws the
    // same operation numbers from the communicator.
    auto* block = static_cast<std::byte*>(a.recvbuf) + mine.offset * es;
    RingPipeline::Plan plan;
    plan.group = rail_;
    plan.vrank = pl.host_index;
    plan.rs_steps = pl.hosts - 1;
    plan.ag_steps = pl.hosts - 1;
    plan.in = block;
    plan.work = block;
    inter_.run(plan, mine.count, a.type, a.op, deadline, what_);
  }

  arena_->signal(Phase::kReduced, seq);
  arena_->wait_local(Phase::kReduced, seq, what_, deadline);
  memory::MemorySpace& space = inter_.space();
  auto* recv = static_cast<std::byte*>(a.recvbuf);
  for (int j = 0; j < pl.local_size; ++j) {
    if (j == pl.local_index) continue;
    const pattern::Span b = block_of(a.count, pl.local_size, j);
    if (b.count == 0) continue;
    space.copy(recv + b.offset * es, arena_->peer(j, recv + b.offset * es), b.count * es);
  }
  arena_->signal(Phase::kDone, seq);
  arena_->wait_local(Phase::kDone, seq, what_, deadline);
}

}  // namespace ibscope::collectives
