#include "ibscope/collectives/algorithms/ring_allreduce.hpp"

#include <fmt/format.h>

#include <cstring>

#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/collectives/reduce.hpp"

namespace ibscope {

RingAllreduce::RingAllreduce(ucx::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      chunk_bytes_(options.chunk_bytes != 0 ? options.chunk_bytes : kDefaultChunkBytes),
      scratch_(kScratchSlots * chunk_bytes_) {}

void RingAllreduce::run(const AllreduceArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  const std::size_t es = size_of(a.type);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  if (p == 1 || a.count == 0) {
    if (in != out && a.count > 0) std::memcpy(out, in, a.count * es);
    return;
  }
  const std::size_t chunk_elems = std::max<std::size_t>(1, chunk_bytes_ / es);
  const int rs_steps = p - 1;
  const int total_steps = 2 * (p - 1);
  const int next = pattern::ring_next(me, p);
  const int prev = pattern::ring_prev(me, p);
  const std::uint32_t seq = comm_.next_op_seq();

  // Per step: which segment goes out, which comes in, and their chunk counts (equal: the
  // segment received at step s is the one sent at step s+1). Members are reused across calls.
  auto& plan = plan_;
  plan.resize(static_cast<std::size_t>(total_steps));
  for (int s = 0; s < total_steps; ++s) {
    const auto st = s < rs_steps ? pattern::ring_reduce_scatter_step(me, p, s)
                                 : pattern::ring_allgather_step(me, p, s - rs_steps);
    StepPlan& sp = plan[static_cast<std::size_t>(s)];
    sp.send = pattern::ring_segment(a.count, p, st.send_segment);
    sp.recv = pattern::ring_segment(a.count, p, st.recv_segment);
    sp.chunks = pattern::chunk_count(sp.recv.count, chunk_elems);
  }
  auto send_chunks = [&](int s) {
    return pattern::chunk_count(plan[static_cast<std::size_t>(s)].send.count, chunk_elems);
  };

  // done[s]: chunks of step s received (and reduced), in order. sent[s]: sends completed.
  auto& done = done_;
  auto& sent = sent_;
  done.assign(static_cast<std::size_t>(total_steps), 0);
  sent.assign(static_cast<std::size_t>(total_steps), 0);
  auto& recvs = recvs_;
  auto& sends = sends_;
  recvs.clear();  // empty after every successful call; cleared in case the last one threw
  sends.clear();
  auto& free_slots = free_slots_;
  free_slots.clear();
  for (std::size_t i = 0; i < kScratchSlots; ++i) free_slots.push_back(i);
  // Bounded in-flight operations, like a FIFO of slots: a few chunks ahead keep the pipe full.
  // Posting every chunk of a large message at once left hundreds of rendezvous requests queued
  // in UCX 1.13 on both sides and could stall the exchange (seen at 64-128 MiB over cma).
  constexpr std::size_t kMaxRecvsInFlight = 8;
  constexpr std::size_t kMaxSendsInFlight = 8;

  Cursor rc, sc;  // next receive / send to post
  auto advance = [&](Cursor& c, auto chunks_of) {
    ++c.chunk;
    while (c.step < total_steps && c.chunk >= chunks_of(c.step)) {
      ++c.step;
      c.chunk = 0;
    }
  };
  auto recv_chunks = [&](int s) { return plan[static_cast<std::size_t>(s)].chunks; };
  // Skip leading empty steps (segments are empty when count < p).
  rc.chunk = static_cast<std::size_t>(-1);
  advance(rc, recv_chunks);
  sc.chunk = static_cast<std::size_t>(-1);
  advance(sc, send_chunks);

  if (what_count_ != a.count) {
    what_ = fmt::format("allreduce ring ({} elements)", a.count);
    what_count_ = a.count;
  }
  const std::string& what = what_;
  while (true) {
    // Post receives: reduce-scatter chunks need a free scratch slot; all-gather chunks land in
    // the output, but only after our own send from that region completed.
    while (rc.step < total_steps && recvs.size() < kMaxRecvsInFlight) {
      const bool rs = rc.step < rs_steps;
      const auto span =
          pattern::chunk_of(plan[static_cast<std::size_t>(rc.step)].recv, chunk_elems, rc.chunk);
      std::byte* dst;
      std::size_t slot = 0;
      if (rs) {
        if (free_slots.empty()) break;
        slot = free_slots.back();
        free_slots.pop_back();
        dst = scratch_.data() + slot * chunk_bytes_;
      } else {
        if (sent[static_cast<std::size_t>(rc.step - rs_steps)] <= rc.chunk) break;
        dst = out + span.offset * es;
      }
      const auto tag = ucx::make_tag(prev, seq, static_cast<std::uint32_t>(rc.step),
                                     static_cast<std::uint32_t>(rc.chunk));
      recvs.push_back({rc, slot, comm_.irecv(prev, tag, dst, span.count * es)});
      advance(rc, recv_chunks);
    }
    // Post sends whose data is ready: step 0 from the input, later steps once the same chunk
    // of the previous step has been received (and reduced).
    while (sc.step < total_steps && sends.size() < kMaxSendsInFlight &&
           (sc.step == 0 || done[static_cast<std::size_t>(sc.step - 1)] > sc.chunk)) {
      const auto span =
          pattern::chunk_of(plan[static_cast<std::size_t>(sc.step)].send, chunk_elems, sc.chunk);
      const std::byte* src = (sc.step == 0 ? in : out) + span.offset * es;
      const auto tag = ucx::make_tag(me, seq, static_cast<std::uint32_t>(sc.step),
                                     static_cast<std::uint32_t>(sc.chunk));
      sends.push_back({sc, comm_.isend(next, tag, src, span.count * es)});
      advance(sc, send_chunks);
    }
    bool moved = false;
    while (!recvs.empty() && recvs.front().req.test(comm_)) {
      PendingRecv& r = recvs.front();
      if (r.at.step < rs_steps) {
        const auto span = pattern::chunk_of(plan[static_cast<std::size_t>(r.at.step)].recv,
                                            chunk_elems, r.at.chunk);
        reduce(a.type, a.op, out + span.offset * es, scratch_.data() + r.slot * chunk_bytes_,
               in + span.offset * es, span.count);
        free_slots.push_back(r.slot);
      }
      ++done[static_cast<std::size_t>(r.at.step)];
      recvs.pop_front();
      moved = true;
    }
    while (!sends.empty() && sends.front().req.test(comm_)) {
      ++sent[static_cast<std::size_t>(sends.front().at.step)];
      sends.pop_front();
      moved = true;
    }
    if (rc.step >= total_steps && sc.step >= total_steps && recvs.empty() && sends.empty()) break;
    if (!moved) {
      comm_.progress();
      comm_.poll_health(what, deadline, recvs.empty() ? next : prev);
    }
  }
}

}  // namespace ibscope
