#include "ibscope/collectives/algorithms/rd_allreduce.hpp"

#include <fmt/format.h>

#include <cstring>

#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/core/reduce.hpp"

namespace ibscope::collectives {

double rd_allreduce_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const int pow2 = pattern::pow2_floor(p);
  const double step = c.alpha_s + n * c.beta_s_per_byte + n * c.gamma_s_per_byte;
  double t = pattern::log2_exact(pow2) * step;
  if (pow2 != p) t += step + c.alpha_s + n * c.beta_s_per_byte;
  return t;
}

RdAllreduce::RdAllreduce(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      layout_(pattern::recursive_layout(comm.rank(), comm.size())),
      scratch_(options.memory) {}

void RdAllreduce::wait_both(transport::Request& recv, transport::Request& send, int peer,
                            const Deadline& deadline) {
  while (true) {
    // Test both every round, so that a failed send is reported even while the receive waits.
    const bool sent = send.test();
    const bool received = recv.test();
    if (sent && received) return;
    comm_.progress();
    comm_.poll_health(what_, deadline, peer);
  }
}

void RdAllreduce::run(const CollectiveArgs& a, const Deadline& deadline) {
  const std::size_t es = size_of(a.type);
  const std::size_t bytes = a.count * es;
  auto* out = static_cast<std::byte*>(a.recvbuf);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  if (allreduce_without_peers(a, comm_.size(), scratch_.space())) return;
  const std::uint32_t seq = comm_.next_op_seq();
  const int me = comm_.rank();
  const pattern::RecursiveLayout& l = layout_;
  // Tag steps: 0 pre-step, 1..steps the doubling steps, steps + 1 the post-step.
  const auto post_step = static_cast<std::uint32_t>(l.steps + 1);
  scratch_.reserve(bytes);
  if (what_count_ != a.count) {
    what_ = fmt::format("allreduce rd ({} elements)", a.count);
    what_count_ = a.count;
  }

  if (l.role == pattern::PrePostRole::kSendIdle) {
    const int peer = l.prepost_partner;
    const auto send_tag = transport::make_tag(me, seq, 0, 0);
    const auto recv_tag = transport::make_tag(peer, seq, post_step, 0);
    if (in != out) {
      transport::Request recv = comm_.irecv(peer, recv_tag, out, bytes);
      transport::Request send = comm_.isend(peer, send_tag, in, bytes);
      wait_both(recv, send, peer, deadline);
    } else {
      // In place the result lands where our input is still being sent from.
      transport::Request send = comm_.isend(peer, send_tag, in, bytes);
      comm_.wait(send, what_, deadline);
      transport::Request recv = comm_.irecv(peer, recv_tag, out, bytes);
      comm_.wait(recv, what_, deadline);
    }
    return;
  }

  const std::byte* mine = in;  // where this rank's partial result is
  if (l.role == pattern::PrePostRole::kReduceJoin) {
    const int peer = l.prepost_partner;
    transport::Request recv =
        comm_.irecv(peer, transport::make_tag(peer, seq, 0, 0), scratch_.data(), bytes);
    comm_.wait(recv, what_, deadline);
    // The partner is the lower rank: its vector goes first.
    scratch_.space().reduce(a.type, a.op, out, scratch_.data(), in, a.count);
    mine = out;
  }
  for (int k = 0; k < l.steps; ++k) {
    const int partner_new = pattern::recursive_partner(l.new_rank, k);
    const int peer = pattern::recursive_rank_of(partner_new, l.p);
    const auto step = static_cast<std::uint32_t>(k + 1);
    transport::Request recv =
        comm_.irecv(peer, transport::make_tag(peer, seq, step, 0), scratch_.data(), bytes);
    transport::Request send = comm_.isend(peer, transport::make_tag(me, seq, step, 0), mine, bytes);
    wait_both(recv, send, peer, deadline);
    // Both partners compute (lower new rank's vector) op (higher's): identical bits on both.
    if (l.new_rank < partner_new) {
      scratch_.space().reduce(a.type, a.op, out, mine, scratch_.data(), a.count);
    } else {
      scratch_.space().reduce(a.type, a.op, out, scratch_.data(), mine, a.count);
    }
    mine = out;
  }
  if (l.role == pattern::PrePostRole::kReduceJoin) {
    const int peer = l.prepost_partner;
    transport::Request send =
        comm_.isend(peer, transport::make_tag(me, seq, post_step, 0), out, bytes);
    comm_.wait(send, what_, deadline);
  }
}

}  // namespace ibscope::collectives
