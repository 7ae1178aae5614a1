#include "ibscope/collectives/algorithms/ring_broadcast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::collectives {

double ring_broadcast_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  // Chunk count as the default chunk size gives; at least one chunk.
  const double chunk = static_cast<double>(RingBroadcast::kDefaultChunkBytes);
  const double chunks = std::max(1.0, n / chunk);
  const double per_chunk = std::min(n, chunk);
  return (p - 2 + chunks) * (c.alpha_s + per_chunk * c.beta_s_per_byte);
}

RingBroadcast::RingBroadcast(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      chunk_bytes_(options.chunk_bytes != 0 ? options.chunk_bytes : kDefaultChunkBytes),
      memory_(options.memory ? options.memory : memory::host_space()) {}

void RingBroadcast::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  if (a.root < 0 || a.root >= p) {
    throw UsageError(
        fmt::format("broadcast: root {} is not a rank of this {}-rank job", a.root, p));
  }
  const std::size_t es = size_of(a.type);
  const std::size_t bytes = a.count * es;
  const bool is_root = me == a.root;
  if (is_root && a.sendbuf != a.recvbuf && bytes > 0) {
    memory_->copy(a.recvbuf, a.sendbuf, bytes);
  }
  if (p == 1 || bytes == 0) return;
  if (what_count_ != a.count) {
    what_ = fmt::format("broadcast ring ({} elements)", a.count);
    what_count_ = a.count;
  }
  // Chain order starts at the root: position v = (rank - root) mod p.
  const int v = pattern::mod(me - a.root, p);
  const bool forwards = v != p - 1;
  const int next = pattern::ring_next(me, p);
  const int prev = pattern::ring_prev(me, p);
  const std::size_t chunk_elems = std::max<std::size_t>(1, chunk_bytes_ / es);
  const std::size_t chunks = pattern::chunk_count(a.count, chunk_elems);
  const pattern::Span all{0, a.count};
  const std::uint32_t seq = comm_.next_op_seq();
  // The root sends from its input (the copy above may still be in cache; either is correct).
  const auto* src = static_cast<const std::byte*>(is_root ? a.sendbuf : a.recvbuf);
  auto* dst = static_cast<std::byte*>(a.recvbuf);

  constexpr std::size_t kMaxInFlight = 8;
  recvs_.clear();
  sends_.clear();
  std::size_t posted_recvs = is_root ? chunks : 0;  // the root has every chunk already
  std::size_t received = posted_recvs;
  std::size_t posted_sends = forwards ? 0 : chunks;
  while (received < chunks || posted_sends < chunks || !sends_.empty()) {
    while (posted_recvs < chunks && recvs_.size() < kMaxInFlight) {
      const auto span = pattern::chunk_of(all, chunk_elems, posted_recvs);
      const auto tag = transport::make_tag(prev, seq, 0, static_cast<std::uint32_t>(posted_recvs));
      recvs_.push_back(
          {posted_recvs, comm_.irecv(prev, tag, dst + span.offset * es, span.count * es)});
      ++posted_recvs;
    }
    while (posted_sends < received && sends_.size() < kMaxInFlight) {
      const auto span = pattern::chunk_of(all, chunk_elems, posted_sends);
      const auto tag = transport::make_tag(me, seq, 0, static_cast<std::uint32_t>(posted_sends));
      sends_.push_back(
          {posted_sends, comm_.isend(next, tag, src + span.offset * es, span.count * es)});
      ++posted_sends;
    }
    bool moved = false;
    while (!recvs_.empty() && recvs_.front().req.test()) {
      recvs_.pop_front();
      ++received;
      moved = true;
    }
    while (!sends_.empty() && sends_.front().req.test()) {
      sends_.pop_front();
      moved = true;
    }
    if (!moved) {
      comm_.progress();
      comm_.poll_health(what_, deadline, received < chunks ? prev : next);
    }
  }
}

}  // namespace ibscope::collectives
