#include "ibscope/collectives/algorithms/scattered_alltoall.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"

namespace ibscope::collectives {

double scattered_alltoall_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const int windows = (p - 1 + kScatteredWindowPeers - 1) / kScatteredWindowPeers;
  return windows * c.alpha_s + static_cast<double>(p - 1) / p * n * c.beta_s_per_byte;
}

ScatteredAlltoall::ScatteredAlltoall(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), scratch_(options.memory) {
  window_.reserve(2 * kScatteredWindowPeers);
}

void ScatteredAlltoall::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  if (alltoall_own_block(a, me, p, scratch_.space())) return;
  const std::size_t block_bytes = pattern::alltoall_block_count(a.count, p) * size_of(a.type);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  const bool in_place = in == out;
  if (what_count_ != a.count) {
    what_ = fmt::format("alltoall scattered ({} elements)", a.count);
    what_count_ = a.count;
  }
  if (in_place) {
    scratch_.reserve(static_cast<std::size_t>(std::min(p, kScatteredWindowPeers)) * block_bytes);
  }
  const std::uint32_t seq = comm_.next_op_seq();
  auto tag = [&](int source, int round) {
    return transport::make_tag(source, seq, static_cast<std::uint32_t>(round), 0);
  };
  auto at = [&](int j) { return static_cast<std::size_t>(j) * block_bytes; };
  auto peer_of = [&](int k, bool sending) {
    if (in_place) return pattern::paired_peer(me, p, k);
    return sending ? pattern::shift_send_peer(me, p, k) : pattern::shift_recv_peer(me, p, k);
  };
  // Out of place the shifted exchange's rounds 1..p-1; in place the paired exchange's 0..p-1,
  // the rank's own round left out.
  for (int first = in_place ? 0 : 1; first < p; first += kScatteredWindowPeers) {
    const int end = std::min(p, first + kScatteredWindowPeers);
    window_.clear();
    // In place, the window's blocks leave for the scratch before any receive may land on them.
    auto slot = [&](int k) {
      return scratch_.data() + static_cast<std::size_t>(k - first) * block_bytes;
    };
    if (in_place) {
      for (int k = first; k < end; ++k) {
        const int peer = peer_of(k, true);
        if (peer != me) scratch_.space().copy(slot(k), out + at(peer), block_bytes);
      }
    }
    for (int k = first; k < end; ++k) {  // receives first: no message arrives unexpected
      const int from = peer_of(k, false);
      if (from != me)
        window_.push_back(comm_.irecv(from, tag(from, k), out + at(from), block_bytes));
    }
    for (int k = first; k < end; ++k) {
      const int to = peer_of(k, true);
      if (to == me) continue;
      const std::byte* block = in_place ? slot(k) : in + at(to);
      window_.push_back(comm_.isend(to, tag(me, k), block, block_bytes));
    }
    comm_.wait_all(window_, what_, deadline);
  }
}

}  // namespace ibscope::collectives
