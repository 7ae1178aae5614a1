#include "ibscope/collectives/algorithms/pairwise_alltoall.hpp"

#include <fmt/format.h>

#include <array>

#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"

namespace ibscope::collectives {

double pairwise_alltoall_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const double pm1 = p - 1;
  return pm1 * (c.alpha_s + n / p * c.beta_s_per_byte);
}

PairwiseAlltoall::PairwiseAlltoall(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), scratch_(options.memory) {}

void PairwiseAlltoall::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  if (alltoall_own_block(a, me, p, scratch_.space())) return;
  const std::size_t block_bytes = pattern::alltoall_block_count(a.count, p) * size_of(a.type);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  if (what_count_ != a.count) {
    what_ = fmt::format("alltoall pairwise ({} elements)", a.count);
    what_count_ = a.count;
  }
  // One message per ordered pair and call: the source in the tag tells them apart; the round
  // is in the step for the traces' sake.
  const std::uint32_t seq = comm_.next_op_seq();
  auto tag = [&](int source, int round) {
    return transport::make_tag(source, seq, static_cast<std::uint32_t>(round), 0);
  };
  auto at = [&](int j) { return static_cast<std::size_t>(j) * block_bytes; };
  std::array<transport::Request, 2> both;
  if (in != out) {
    for (int k = 1; k < p; ++k) {
      const int to = pattern::shift_send_peer(me, p, k);
      const int from = pattern::shift_recv_peer(me, p, k);
      both[0] = comm_.irecv(from, tag(from, k), out + at(from), block_bytes);
      both[1] = comm_.isend(to, tag(me, k), in + at(to), block_bytes);
      comm_.wait_all(both, what_, deadline);
    }
    return;
  }
  // In place: the block for the peer is also where the peer's block lands.
  scratch_.reserve(block_bytes);
  for (int k = 0; k < p; ++k) {
    const int peer = pattern::paired_peer(me, p, k);
    if (peer == me) continue;
    std::byte* block = out + at(peer);
    scratch_.space().copy(scratch_.data(), block, block_bytes);
    both[0] = comm_.irecv(peer, tag(peer, k), block, block_bytes);
    both[1] = comm_.isend(peer, tag(me, k), scratch_.data(), block_bytes);
    comm_.wait_all(both, what_, deadline);
  }
}

}  // namespace ibscope::collectives
