#include "ibscope/collectives/algorithms/ring_pipeline.hpp"

#include <algorithm>

namespace ibscope::collectives {

RingPipeline::RingPipeline(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm),
      chunk_bytes_(options.chunk_bytes != 0 ? options.chunk_bytes : kDefaultChunkBytes),
      scratch_(options.memory) {}

void RingPipeline::run(const Plan& plan, std::size_t count, DataType type, ReduceOp op,
                       const Deadline& deadline, const std::string& what) {
  const int me = comm_.rank();
  const int p = plan.group.empty() ? comm_.size() : static_cast<int>(plan.group.size());
  // This rank's position in the ring and its neighbours' ranks.
  int pos = me;
  if (!plan.group.empty()) {
    pos =
        static_cast<int>(std::find(plan.group.begin(), plan.group.end(), me) - plan.group.begin());
  }
  const auto rank_at = [&](int i) {
    return plan.group.empty() ? i : plan.group[static_cast<std::size_t>(i)];
  };
  const std::size_t es = size_of(type);
  const std::size_t chunk_elems = std::max<std::size_t>(1, chunk_bytes_ / es);
  // A slot holds one chunk, rounded up to a cache line so every slot stays aligned (a --chunk
  // below one element still moves one element per chunk). Grows once, then stays.
  const std::size_t slot_bytes = (chunk_elems * es + 63) / 64 * 64;
  scratch_.reserve(kScratchSlots * slot_bytes);
  const int rs_steps = plan.rs_steps;
  const int total_steps = plan.rs_steps + plan.ag_steps;
  const int next = rank_at(pattern::ring_next(pos, p));
  const int prev = rank_at(pattern::ring_prev(pos, p));
  const std::uint32_t seq = comm_.next_op_seq();
  const auto* in = static_cast<const std::byte*>(plan.in);
  auto* work = static_cast<std::byte*>(plan.work);
  auto* last_out = static_cast<std::byte*>(plan.last_out);
  const auto* first_in = static_cast<const std::byte*>(plan.first_in);

  // Per step: which segment goes out, which comes in, and their chunk counts (the segment
  // received at step s is the one sent at step s+1).
  steps_.resize(static_cast<std::size_t>(total_steps));
  for (int s = 0; s < total_steps; ++s) {
    const auto st = s < rs_steps ? pattern::ring_reduce_scatter_step(plan.vrank, p, s)
                                 : pattern::ring_allgather_step(plan.vrank, p, s - rs_steps);
    StepPlan& sp = steps_[static_cast<std::size_t>(s)];
    sp.send = pattern::ring_segment(count, p, st.send_segment);
    sp.recv = pattern::ring_segment(count, p, st.recv_segment);
    sp.send_chunks = pattern::chunk_count(sp.send.count, chunk_elems);
    sp.recv_chunks = pattern::chunk_count(sp.recv.count, chunk_elems);
  }
  auto step = [&](int s) -> const StepPlan& { return steps_[static_cast<std::size_t>(s)]; };
  auto send_chunks = [&](int s) { return step(s).send_chunks; };
  auto recv_chunks = [&](int s) { return step(s).recv_chunks; };

  done_.assign(static_cast<std::size_t>(total_steps), 0);
  sent_.assign(static_cast<std::size_t>(total_steps), 0);
  recvs_.clear();  // empty after every successful call; cleared in case the last one threw
  sends_.clear();
  free_slots_.clear();
  for (std::size_t i = 0; i < kScratchSlots; ++i) free_slots_.push_back(i);
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
  // Skip leading empty steps (segments are empty when count < p).
  rc.chunk = static_cast<std::size_t>(-1);
  advance(rc, recv_chunks);
  sc.chunk = static_cast<std::size_t>(-1);
  advance(sc, send_chunks);

  // Where a reduce-scatter chunk's reduction goes.
  auto reduce_dst = [&](int s, const pattern::Span& span) {
    if (last_out != nullptr && s == rs_steps - 1) {
      return last_out + (span.offset - plan.last_out_offset) * es;
    }
    return work + span.offset * es;
  };
  auto send_src = [&](int s, const pattern::Span& span) -> const std::byte* {
    if (s > 0) return work + span.offset * es;
    if (rs_steps > 0) return in + span.offset * es;
    if (first_in != nullptr) return first_in + (span.offset - plan.first_in_offset) * es;
    return work + span.offset * es;
  };
  // An all-gather chunk lands where reduce-scatter step k sent from (in place: `in` is `work`),
  // so it may only be received once that send completed.
  const bool ag_waits_for_rs_send = rs_steps > 0 && plan.ag_steps > 0;

  while (true) {
    while (rc.step < total_steps && recvs_.size() < kMaxRecvsInFlight) {
      const bool rs = rc.step < rs_steps;
      const auto span = pattern::chunk_of(step(rc.step).recv, chunk_elems, rc.chunk);
      std::byte* dst;
      std::size_t slot = 0;
      if (rs) {
        if (free_slots_.empty()) break;
        slot = free_slots_.back();
        free_slots_.pop_back();
        dst = scratch_.data() + slot * slot_bytes;
      } else {
        if (ag_waits_for_rs_send &&
            sent_[static_cast<std::size_t>(rc.step - rs_steps)] <= rc.chunk) {
          break;
        }
        dst = work + span.offset * es;
      }
      const auto tag = transport::make_tag(prev, seq, static_cast<std::uint32_t>(rc.step),
                                           static_cast<std::uint32_t>(rc.chunk));
      recvs_.push_back({rc, slot, comm_.irecv(prev, tag, dst, span.count * es)});
      advance(rc, recv_chunks);
    }
    // Sends whose data is ready: step 0 from the input, later steps once the same chunk of the
    // previous step has been received (and reduced).
    while (sc.step < total_steps && sends_.size() < kMaxSendsInFlight &&
           (sc.step == 0 || done_[static_cast<std::size_t>(sc.step - 1)] > sc.chunk)) {
      const auto span = pattern::chunk_of(step(sc.step).send, chunk_elems, sc.chunk);
      const auto tag = transport::make_tag(me, seq, static_cast<std::uint32_t>(sc.step),
                                           static_cast<std::uint32_t>(sc.chunk));
      sends_.push_back({sc, comm_.isend(next, tag, send_src(sc.step, span), span.count * es)});
      advance(sc, send_chunks);
    }
    bool moved = false;
    while (!recvs_.empty() && recvs_.front().req.test()) {
      PendingRecv& r = recvs_.front();
      if (r.at.step < rs_steps) {
        const auto span = pattern::chunk_of(step(r.at.step).recv, chunk_elems, r.at.chunk);
        scratch_.space().reduce(type, op, reduce_dst(r.at.step, span),
                                scratch_.data() + r.slot * slot_bytes, in + span.offset * es,
                                span.count);
        free_slots_.push_back(r.slot);
      }
      ++done_[static_cast<std::size_t>(r.at.step)];
      recvs_.pop_front();
      moved = true;
    }
    while (!sends_.empty() && sends_.front().req.test()) {
      ++sent_[static_cast<std::size_t>(sends_.front().at.step)];
      sends_.pop_front();
      moved = true;
    }
    if (rc.step >= total_steps && sc.step >= total_steps && recvs_.empty() && sends_.empty()) {
      break;
    }
    if (!moved) {
      comm_.progress();
      comm_.poll_health(what, deadline, recvs_.empty() ? next : prev);
    }
  }
}

}  // namespace ibscope::collectives
