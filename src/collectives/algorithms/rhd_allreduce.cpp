#include "ibscope/collectives/algorithms/rhd_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/core/reduce.hpp"

namespace ibscope::collectives {

double rhd_allreduce_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const int pow2 = pattern::pow2_floor(p);
  const double frac = static_cast<double>(pow2 - 1) / pow2;
  double t = 2 * pattern::log2_exact(pow2) * c.alpha_s + 2 * frac * n * c.beta_s_per_byte +
             frac * n * c.gamma_s_per_byte;
  if (pow2 != p) {
    t += 2 * c.alpha_s + 2 * n * c.beta_s_per_byte + n * c.gamma_s_per_byte;
  }
  return t;
}

namespace {

std::size_t slot_bytes_for(std::size_t chunk_bytes) {
  // A chunk is at least one element (up to 8 bytes), whatever --chunk says; 64-byte multiples
  // keep every slot as aligned as the first.
  const std::size_t b = std::max<std::size_t>(chunk_bytes, 8);
  return (b + 63) / 64 * 64;
}

}  // namespace

RhdAllreduce::RhdAllreduce(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      layout_(pattern::recursive_layout(comm.rank(), comm.size())),
      chunk_bytes_(options.chunk_bytes != 0 ? options.chunk_bytes : kDefaultChunkBytes),
      slot_bytes_(slot_bytes_for(chunk_bytes_)),
      scratch_(options.memory) {
  scratch_.reserve(kScratchSlots * slot_bytes_);
}

void RhdAllreduce::exchange(const CollectiveArgs& a, std::byte* out, std::uint32_t seq,
                            const Exchange& x, const Deadline& deadline) {
  const std::size_t es = size_of(a.type);
  const std::size_t ce = chunk_elems_;
  const std::size_t n_send = pattern::chunk_count(x.send.count, ce);
  const std::size_t n_recv = pattern::chunk_count(x.recv.count, ce);
  const bool reducing = x.reduce_with != nullptr;
  // Reduced chunks are processed in order, so chunk c may use slot c % kScratchSlots as long as
  // no more than kScratchSlots receives are outstanding.
  const std::size_t recv_limit = reducing ? kScratchSlots : kMaxInFlight;
  const int me = comm_.rank();
  std::size_t posted_recv = 0, posted_send = 0;
  recvs_.clear();
  sends_.clear();
  while (true) {
    while (posted_recv < n_recv && recvs_.size < recv_limit) {
      const pattern::Span ch = pattern::chunk_of(x.recv, ce, posted_recv);
      std::byte* dst = reducing ? scratch_.data() + (posted_recv % kScratchSlots) * slot_bytes_
                                : out + ch.offset * es;
      const auto tag =
          transport::make_tag(x.peer, seq, x.step, static_cast<std::uint32_t>(posted_recv));
      recvs_.push(posted_recv, comm_.irecv(x.peer, tag, dst, ch.count * es));
      ++posted_recv;
    }
    while (posted_send < n_send && sends_.size < kMaxInFlight) {
      const pattern::Span ch = pattern::chunk_of(x.send, ce, posted_send);
      const auto tag =
          transport::make_tag(me, seq, x.step, static_cast<std::uint32_t>(posted_send));
      sends_.push(posted_send,
                  comm_.isend(x.peer, tag, x.send_base + ch.offset * es, ch.count * es));
      ++posted_send;
    }
    bool moved = false;
    while (recvs_.size > 0 && recvs_.front().req.test()) {
      if (reducing) {
        const std::size_t c = recvs_.front().chunk;
        const pattern::Span ch = pattern::chunk_of(x.recv, ce, c);
        const std::byte* theirs = scratch_.data() + (c % kScratchSlots) * slot_bytes_;
        const std::byte* mine = x.reduce_with + ch.offset * es;
        std::byte* dst = out + ch.offset * es;
        if (x.mine_first) {
          scratch_.space().reduce(a.type, a.op, dst, mine, theirs, ch.count);
        } else {
          scratch_.space().reduce(a.type, a.op, dst, theirs, mine, ch.count);
        }
      }
      recvs_.pop();
      moved = true;
    }
    while (sends_.size > 0 && sends_.front().req.test()) {
      sends_.pop();
      moved = true;
    }
    if (posted_recv == n_recv && posted_send == n_send && recvs_.size == 0 && sends_.size == 0) {
      return;
    }
    if (!moved) {
      comm_.progress();
      comm_.poll_health(what_, deadline, x.peer);
    }
  }
}

void RhdAllreduce::run(const CollectiveArgs& a, const Deadline& deadline) {
  const std::size_t es = size_of(a.type);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  if (allreduce_without_peers(a, comm_.size(), scratch_.space())) return;
  const std::uint32_t seq = comm_.next_op_seq();
  const pattern::RecursiveLayout& l = layout_;
  chunk_elems_ = std::max<std::size_t>(1, chunk_bytes_ / es);
  if (what_count_ != a.count) {
    what_ = fmt::format("allreduce rhd ({} elements)", a.count);
    what_count_ = a.count;
  }
  // Tag steps: 0 pre-step, 1..steps halving, steps+1..2 steps doubling, 2 steps + 1 post-step.
  const auto post_step = static_cast<std::uint32_t>(2 * l.steps + 1);
  const pattern::Span whole{0, a.count};
  const pattern::Span none{0, 0};

  if (l.role == pattern::PrePostRole::kSendIdle) {
    // One after the other: in place, the result lands where the input is sent from. The
    // result comes only after the whole power-of-two part, so nothing is lost by waiting.
    const int peer = l.prepost_partner;
    exchange(a, out, seq, {peer, 0, in, whole, none, nullptr, false}, deadline);
    exchange(a, out, seq, {peer, post_step, in, none, whole, nullptr, false}, deadline);
    return;
  }

  const std::byte* mine = in;  // where this rank's partial result is
  if (l.role == pattern::PrePostRole::kReduceJoin) {
    // The partner is the lower rank: its vector goes first.
    exchange(a, out, seq, {l.prepost_partner, 0, in, none, whole, in, false}, deadline);
    mine = out;
  }
  for (int k = 0; k < l.steps; ++k) {
    const int partner_new = pattern::recursive_partner(l.new_rank, k);
    const int peer = pattern::recursive_rank_of(partner_new, l.p);
    const auto h = pattern::halving_step(a.count, l.pow2, l.new_rank, k);
    // Sending from `mine` and reducing into `out` touch disjoint ranges, also in place.
    exchange(a, out, seq,
             {peer, static_cast<std::uint32_t>(1 + k), mine, h.send, h.keep, mine,
              l.new_rank < partner_new},
             deadline);
    mine = out;
  }
  for (int j = 0; j < l.steps; ++j) {
    const int partner_new = pattern::recursive_partner(l.new_rank, l.steps - 1 - j);
    const int peer = pattern::recursive_rank_of(partner_new, l.p);
    const auto d = pattern::doubling_step(a.count, l.pow2, l.new_rank, j);
    exchange(
        a, out, seq,
        {peer, static_cast<std::uint32_t>(1 + l.steps + j), out, d.send, d.recv, nullptr, false},
        deadline);
  }
  if (l.role == pattern::PrePostRole::kReduceJoin) {
    exchange(a, out, seq, {l.prepost_partner, post_step, out, whole, none, nullptr, false},
             deadline);
  }
}

}  // namespace ibscope::collectives
