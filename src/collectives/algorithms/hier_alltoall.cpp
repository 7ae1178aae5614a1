#include "ibscope/collectives/algorithms/hier_alltoall.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/collectives/algorithms/hier_arena.hpp"
#include "ibscope/collectives/algorithms/scattered_alltoall.hpp"
#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

using intra_host::Phase;

double hier_alltoall_cost_s(const LinkCost& intra, const LinkCost& inter, double n, int l,
                            int hosts) noexcept {
  double t = 0;
  if (l > 1) t += 2 * intra.alpha_s + static_cast<double>(l - 1) / l * n * intra.beta_s_per_byte;
  if (hosts > 1) t += scattered_alltoall_cost_s(inter, n, hosts);
  return t;
}

double hier_alltoall_one_tier_cost_s(const LinkCost& c, double n, int p) noexcept {
  return hier_alltoall_cost_s(c, c, n, 1, p);
}

HierAlltoall::HierAlltoall(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      arena_(hier_arena(options, "-A pairwise or scattered")),
      scratch_(options.memory) {
  window_.reserve(2 * kScatteredWindowPeers);
}

void HierAlltoall::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  memory::MemorySpace& space = scratch_.space();
  if (alltoall_own_block(a, me, p, space)) return;
  if (what_count_ != a.count) {
    what_ = fmt::format("alltoall hier ({} elements)", a.count);
    what_count_ = a.count;
  }
  const std::size_t block_bytes = pattern::alltoall_block_count(a.count, p) * size_of(a.type);
  const std::size_t all_bytes = block_bytes * static_cast<std::size_t>(p);
  if (!arena_->contains(a.sendbuf, all_bytes) || !arena_->contains(a.recvbuf, all_bytes)) {
    throw UsageError(fmt::format("{}: the buffers are not in the intra-host arena", what_));
  }
  const auto& pl = arena_->placement();
  const int l = pl.local_size, hosts = pl.hosts, i = pl.local_index, h = pl.host_index;
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  const bool in_place = in == out;
  const std::size_t host_bytes = static_cast<std::size_t>(l) * block_bytes;
  auto at = [&](int rank) { return static_cast<std::size_t>(rank) * block_bytes; };
  // Local rank j's block for rank (g, i), read in place.
  auto block_for = [&](int j, int g) {
    const std::byte* mine = in + at(g * l + i);
    return j == i ? mine : arena_->peer(j, mine);
  };
  // Host g's message: the L blocks of this host for rank (g, i), in local-rank order.
  auto message = [&](int g) { return scratch_.data() + static_cast<std::size_t>(g) * host_bytes; };
  auto gather = [&](int g) {
    for (int j = 0; j < l; ++j) {
      space.copy(message(g) + static_cast<std::size_t>(j) * block_bytes, block_for(j, g),
                 block_bytes);
    }
  };
  scratch_.reserve(all_bytes);
  const std::uint64_t seq = arena_->next_seq();
  const std::uint32_t op_seq = comm_.next_op_seq();
  if (l > 1) {
    arena_->signal(Phase::kArrived, seq);
    arena_->wait_local(Phase::kArrived, seq, what_, deadline);
  }
  auto reads_done = [&] {
    if (l == 1) return;
    arena_->signal(Phase::kReduced, seq);
    arena_->wait_local(Phase::kReduced, seq, what_, deadline);
  };
  if (in_place) {
    for (int g = 0; g < hosts; ++g) gather(g);
    reads_done();  // from here on the local peers write into what they read from
    space.copy(out + at(h * l), message(h), host_bytes);
  } else {
    for (int j = 0; j < l; ++j) {
      if (j != i) space.copy(out + at(h * l + j), block_for(j, h), block_bytes);
    }
  }
  for (int first = 1; first < hosts; first += kScatteredWindowPeers) {
    const int end = std::min(hosts, first + kScatteredWindowPeers);
    window_.clear();
    for (int k = first; k < end; ++k) {
      const int g = pattern::shift_recv_peer(h, hosts, k);
      const int from = pl.rail_rank_of(g);
      window_.push_back(
          comm_.irecv(from, transport::make_tag(from, op_seq, static_cast<std::uint32_t>(k), 0),
                      out + at(g * l), host_bytes));
    }
    for (int k = first; k < end; ++k) {
      const int g = pattern::shift_send_peer(h, hosts, k);
      if (!in_place) gather(g);
      window_.push_back(comm_.isend(
          pl.rail_rank_of(g), transport::make_tag(me, op_seq, static_cast<std::uint32_t>(k), 0),
          message(g), host_bytes));
    }
    comm_.wait_all(window_, what_, deadline);
  }
  if (!in_place) reads_done();
}

}  // namespace ibscope::collectives
