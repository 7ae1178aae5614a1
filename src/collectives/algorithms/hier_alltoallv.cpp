#include "ibscope/collectives/algorithms/hier_alltoallv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ibscope/collectives/algorithms/hier_arena.hpp"
#include "ibscope/collectives/algorithms/scattered_alltoall.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

using intra_host::Phase;

HierAlltoallv::HierAlltoallv(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      arena_(hier_arena(options, "-A pairwise or scattered")),
      prologue_("hier", options),
      scratch_(options.memory) {
  window_.reserve(2 * kScatteredWindowPeers);
}

const HierAlltoallv::HostBlocks& HierAlltoallv::host_blocks(const AlltoallvCall& call) {
  const AlltoallvPlan& plan = call.plan;
  if (!plan.matrix) {
    throw UsageError(fmt::format(
        "{}: the call's counts carry no matrix (AlltoallvPlan::matrix, which counts_call sets); "
        "hier gathers its local peers' blocks by it",
        prologue_.what()));
  }
  if (blocks_.matrix == plan.matrix) return blocks_;
  const CountsMatrix& m = *plan.matrix;
  const auto& pl = arena_->placement();
  const int l = pl.local_size, hosts = pl.hosts, i = pl.local_index;
  const auto p = static_cast<std::size_t>(l) * static_cast<std::size_t>(hosts);
  HostBlocks b;
  b.count.assign(p, 0);
  b.offset.assign(p, 0);
  for (int j = 0; j < l; ++j) {
    const auto row = m.row(pl.local_rank_of(j));
    std::size_t at = 0;  // where the block for destination d starts in j's send buffer
    for (std::size_t d = 0; d < p; ++d) {
      if (d % static_cast<std::size_t>(l) == static_cast<std::size_t>(i)) {
        const std::size_t k = d - static_cast<std::size_t>(i) + static_cast<std::size_t>(j);
        b.count[k] = row[d];
        b.offset[k] = at;
      }
      at += row[d];
    }
    b.send_extent = std::max(b.send_extent, at);
  }
  b.message_at.assign(static_cast<std::size_t>(hosts) + 1, 0);
  b.from_host.assign(static_cast<std::size_t>(hosts), 0);
  for (int g = 0; g < hosts; ++g) {
    std::size_t message = 0;
    for (int j = 0; j < l; ++j) {
      const auto k = static_cast<std::size_t>(g * l + j);
      b.from_host[static_cast<std::size_t>(g)] += plan.recv_counts[k];
      message += b.count[k];
    }
    // No message to its own host, and none with one rank per host (sent in place).
    if (g == pl.host_index || l == 1) message = 0;
    b.message_at[static_cast<std::size_t>(g) + 1] =
        b.message_at[static_cast<std::size_t>(g)] + message;
  }
  b.matrix = plan.matrix;
  blocks_ = std::move(b);
  return blocks_;
}

void HierAlltoallv::run(const CollectiveArgs& a, const Deadline& deadline) {
  const AlltoallvCall c = prologue_.begin(a, comm_);
  if (comm_.size() == 1) return;
  const HostBlocks& b = host_blocks(c);
  if (b.matrix->total() == 0) return;  // nothing moves, on every rank
  const std::size_t es = c.elem_bytes;
  if (!arena_->contains(c.in, b.send_extent * es) ||
      !arena_->contains(c.out, c.plan.recv_total * es)) {
    throw UsageError(
        fmt::format("{}: the buffers are not in the intra-host arena", prologue_.what()));
  }
  const auto& pl = arena_->placement();
  const int l = pl.local_size, hosts = pl.hosts, i = pl.local_index, h = pl.host_index;
  const int me = comm_.rank();
  memory::MemorySpace& space = scratch_.space();
  // Local rank j's elements from `offset` on in its send buffer, read in place.
  auto peer_block = [&](int j, std::size_t offset) {
    const std::byte* mine = c.in + offset * es;
    return j == i ? mine : arena_->peer(j, mine);
  };
  // The message to rank (g, i): with one rank per host this rank's block, sent from where it
  // is; else the local ranks' blocks for (g, i) gathered into the scratch, empty ones left out.
  auto message_to = [&](int g) -> std::pair<const std::byte*, std::size_t> {
    const auto first_block = static_cast<std::size_t>(g * l);
    if (l == 1) return {c.in + b.offset[first_block] * es, b.count[first_block] * es};
    std::byte* message = scratch_.data() + b.message_at[static_cast<std::size_t>(g)] * es;
    std::size_t bytes = 0;
    for (int j = 0; j < l; ++j) {
      const std::size_t block = first_block + static_cast<std::size_t>(j);
      const std::size_t n = b.count[block] * es;
      if (n == 0) continue;
      space.copy(message + bytes, peer_block(j, b.offset[block]), n);
      bytes += n;
    }
    return {message, bytes};
  };
  scratch_.reserve(b.message_at.back() * es);
  const std::uint64_t seq = arena_->next_seq();
  if (l > 1) {
    arena_->signal(Phase::kArrived, seq);
    arena_->wait_local(Phase::kArrived, seq, prologue_.what(), deadline);
  }
  for (int j = 0; j < l; ++j) {
    const int from = pl.local_rank_of(j);
    if (j == i || c.recv_bytes(from) == 0) continue;  // the own block: the prologue's copy
    space.copy(c.recv_block(from),
               peer_block(j, c.plan.source_offsets[static_cast<std::size_t>(from)]),
               c.recv_bytes(from));
  }
  for (int first = 1; first < hosts; first += kScatteredWindowPeers) {
    const int end = std::min(hosts, first + kScatteredWindowPeers);
    window_.clear();
    for (int k = first; k < end; ++k) {
      const int g = pattern::shift_recv_peer(h, hosts, k);
      const std::size_t bytes = b.from_host[static_cast<std::size_t>(g)] * es;
      if (bytes == 0) continue;
      const int from = pl.rail_rank_of(g);
      // Host g's blocks are g L .. g L + L - 1 of the receive buffer, one run in source order.
      window_.push_back(comm_.irecv(from, c.tag(from, k), c.recv_block(g * l), bytes));
    }
    for (int k = first; k < end; ++k) {
      const int g = pattern::shift_send_peer(h, hosts, k);
      const auto [message, bytes] = message_to(g);
      if (bytes == 0) continue;
      window_.push_back(comm_.isend(pl.rail_rank_of(g), c.tag(me, k), message, bytes));
    }
    if (!window_.empty()) comm_.wait_all(window_, prologue_.what(), deadline);
  }
  if (l > 1) {
    arena_->signal(Phase::kReduced, seq);
    arena_->wait_local(Phase::kReduced, seq, prologue_.what(), deadline);
  }
}

}  // namespace ibscope::collectives
