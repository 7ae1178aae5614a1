#include "victim_window.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "congestion_tags.hpp"
#include "ibscope/collectives/algorithms/ring_pipeline.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::accept::congestion {
namespace {

using transport::make_tag;
using transport::Request;

// Ping-pong with the partner; the first rank of the pair times each round trip.
void ping_pong(transport::Comm& comm, int peer, bool timer, const VictimSpec& spec,
               VictimWindow& out) {
  const int me = comm.rank();
  std::vector<std::byte> msg(static_cast<std::size_t>(spec.latency_bytes), std::byte{1});
  std::vector<std::byte> back(msg.size());
  const Deadline deadline(spec.timeout_s);
  const std::string what = fmt::format("accept congestion: ping-pong with rank {}", peer);
  for (int i = 0; i < spec.warmup + spec.latency_iters; ++i) {
    const auto chunk = static_cast<std::uint32_t>(i & 0xfffff);
    if (timer) {
      Request r =
          comm.irecv(peer, make_tag(peer, kPingPongSeq, 0, chunk), back.data(), back.size());
      const Clock::time_point t0 = Clock::now();
      Request s = comm.isend(peer, make_tag(me, kPingPongSeq, 0, chunk), msg.data(), msg.size());
      comm.wait(r, what, deadline);
      const Clock::time_point t1 = Clock::now();
      comm.wait(s, what, deadline);
      if (i >= spec.warmup) out.half_rtt_us.push_back(seconds_between(t0, t1) * 1e6 / 2);
    } else {
      Request r =
          comm.irecv(peer, make_tag(peer, kPingPongSeq, 0, chunk), back.data(), back.size());
      comm.wait(r, what, deadline);
      Request s = comm.isend(peer, make_tag(me, kPingPongSeq, 0, chunk), msg.data(), msg.size());
      comm.wait(s, what, deadline);
    }
  }
}

// Ring all-reduce (sum of float32) over the victims only, every iteration timed.
void allreduce(transport::Comm& comm, const CongestionSplit& split, const VictimSpec& spec,
               VictimWindow& out) {
  const std::vector<int>& group = split.victims;
  const int p = static_cast<int>(group.size());
  const int pos =
      static_cast<int>(std::find(group.begin(), group.end(), comm.rank()) - group.begin());
  const std::size_t count = static_cast<std::size_t>(spec.allreduce_bytes) / sizeof(float);
  std::vector<float> in(count, 1.0f), result(count, 0.0f);
  collectives::RingPipeline ring(comm, collectives::AlgorithmOptions{});
  collectives::RingPipeline::Plan plan;
  plan.vrank = pos;
  plan.group = group;
  plan.rs_steps = p - 1;
  plan.ag_steps = p - 1;
  plan.in = in.data();
  plan.work = result.data();
  const Deadline deadline(spec.timeout_s);
  const std::string what = "accept congestion: victims' all-reduce";
  for (int i = 0; i < spec.warmup + spec.allreduce_iters; ++i) {
    const Clock::time_point t0 = Clock::now();
    ring.run(plan, count, DataType::kFloat32, ReduceOp::kSum, deadline, what);
    const Clock::time_point t1 = Clock::now();
    if (i >= spec.warmup) out.iteration_us.push_back(seconds_between(t0, t1) * 1e6);
  }
  // Every element is the sum of p ones, exact in float: a wrong one is a transport fault.
  const auto wrong = std::count_if(result.begin(), result.end(),
                                   [&](float x) { return x != static_cast<float>(p); });
  if (wrong != 0) {
    throw VerificationError(fmt::format(
        "accept congestion: rank {}: {} of {} elements of the victims' all-reduce are wrong",
        comm.rank(), wrong, count));
  }
}

}  // namespace

VictimWindow run_victim(transport::Comm& comm, const CongestionSplit& split, const VictimSpec& spec,
                        int congestor_leader) {
  const int me = comm.rank();
  const Deadline deadline(spec.timeout_s);
  if (congestor_leader >= 0) {
    std::byte on{0};
    Request r = comm.irecv(congestor_leader,
                           make_tag(congestor_leader, kControlSeq, kStartedStep, 0), &on, 1);
    comm.wait(r, "accept congestion: waiting for the congestors' load", deadline);
  }
  VictimWindow out;
  for (const auto& [a, b] : split.victim_pairs) {
    if (a == me) ping_pong(comm, b, true, spec, out);
    if (b == me) ping_pong(comm, a, false, spec, out);
  }
  allreduce(comm, split, spec, out);
  if (congestor_leader < 0) return out;
  // Stop the load once every victim is done (the victim leader hears from each).
  const int leader = split.victims.front();
  std::byte done{1};
  if (me != leader) {
    Request s = comm.isend(leader, make_tag(me, kControlSeq, kDoneStep, 0), &done, 1);
    comm.wait(s, "accept congestion: telling the victim leader this window is done", deadline);
    return out;
  }
  std::vector<std::byte> dones(split.victims.size());
  std::vector<Request> reqs;
  for (std::size_t k = 1; k < split.victims.size(); ++k) {
    const int v = split.victims[k];
    reqs.push_back(comm.irecv(v, make_tag(v, kControlSeq, kDoneStep, 0), &dones[k], 1));
  }
  comm.wait_all(reqs, "accept congestion: waiting for every victim to finish its window", deadline);
  Request s = comm.isend(congestor_leader, make_tag(me, kControlSeq, kStopStep, 0), &done, 1);
  comm.wait(s, "accept congestion: telling the congestor leader to stop", deadline);
  return out;
}

}  // namespace ibscope::accept::congestion
