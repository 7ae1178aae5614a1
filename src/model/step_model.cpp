#include "ibscope/model/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ibscope/model/interleaved_schedule.hpp"
#include "ibscope/model/moe.hpp"
#include "ibscope/model/transformer.hpp"

namespace ibscope::model {
namespace {

// Bucket sizes of one GPU's gradients: full buckets and a remainder.
std::vector<double> bucket_sizes(double total_bytes, double bucket_bytes) {
  const auto full = static_cast<std::size_t>(std::floor(total_bytes / bucket_bytes));
  std::vector<double> sizes(full, bucket_bytes);
  const double rest = total_bytes - static_cast<double>(full) * bucket_bytes;
  if (rest > 0) sizes.push_back(rest);
  return sizes;
}

struct DataParallelTime {
  double total_s = 0;
  double exposed_s = 0;
};

// Wall time of one micro-batch through one chunk, split into what the GPU computes and what
// each tier carries (tensor- and pipeline-parallel traffic), forward or backward.
struct UnitTraffic {
  double compute_s = 0;
  double intra_s = 0;  ///< TP/PP traffic on the intra-node tier
  double inter_s = 0;  ///< TP/PP traffic on the inter-node tier
  double wall_s() const noexcept { return compute_s + intra_s + inter_s; }
};

// Share of a unit's wall time that the tiers DP crosses are busy with TP/PP traffic: while the
// calls overlap computation, DP gets the rest (it progresses at 1 - load of its speed).
double dp_load(const UnitTraffic& u, const Group& dp) noexcept {
  if (u.wall_s() <= 0) return 0;
  double load = 0;
  if (dp.ranks_per_node > 1) load = std::max(load, u.intra_s / u.wall_s());
  if (dp.ranks > dp.ranks_per_node) load = std::max(load, u.inter_s / u.wall_s());
  return load;
}

DataParallelTime data_parallel(const Workload& w, const NetworkModel& net, const Group& g,
                               const ChunkSchedule& sched, double forward_load,
                               double backward_load) {
  // Megatron-LM wraps each model chunk separately: every chunk has its own buckets.
  const std::vector<double> buckets = bucket_sizes(dp_gradient_bytes(w) / w.vp, w.bucket_bytes);
  std::vector<double> reduce(buckets.size());
  std::vector<double> gather;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (w.distributed_optimizer) {
      reduce[i] = net.collective_s(Collective::kReduceScatter, buckets[i], g);
      // The same elements come back as parameters.
      const double param_bytes = buckets[i] / w.grad_bytes * w.param_bytes;
      gather.push_back(net.collective_s(Collective::kAllgather, param_bytes, g));
    } else {
      reduce[i] = net.collective_s(Collective::kAllreduce, buckets[i], g);
    }
  }
  const auto chunks = static_cast<std::size_t>(w.vp);
  const std::vector<std::vector<double>> chunk_reduce(chunks, reduce);
  const std::vector<std::vector<double>> chunk_gather(chunks, gather);
  DataParallelTime t;
  double reduce_total = 0;
  double gather_total = 0;
  for (double x : reduce) reduce_total += x;
  for (double x : gather) gather_total += x;
  reduce_total *= w.vp;
  gather_total *= w.vp;
  t.total_s = reduce_total + gather_total;
  const auto reduce_exposed = [&] {
    return exposed_after_ready(reduce_calls(sched, chunk_reduce), backward_load);
  };
  switch (w.overlap) {
    case Overlap::kNone:
      t.exposed_s = t.total_s;
      break;
    case Overlap::kGradReduce:
      t.exposed_s = reduce_exposed() + gather_total;
      break;
    case Overlap::kGradReduceAndParamGather:
      t.exposed_s =
          reduce_exposed() + exposed_before_due(gather_calls(sched, chunk_gather), forward_load);
      break;
  }
  return t;
}

}  // namespace

Placement place_ranks(const Workload& w) noexcept {
  const int g = w.gpus_per_node;
  Placement p;
  if (w.tp <= g) {
    p.tp = {w.tp, w.tp, g / w.tp};
  } else {
    p.tp = {w.tp, g, 1};
  }
  // Data-parallel neighbours are t ranks apart: G/t of them share a node when t < G.
  const int dp_per_node = w.tp >= g ? 1 : std::min(w.dp, g / w.tp);
  p.dp = {w.dp, dp_per_node, g / dp_per_node};
  // Pipeline neighbours are t d ranks apart.
  p.pp_across_nodes = w.tp * w.dp * w.pp > g;
  p.pp_concurrent_per_node = std::min(g, w.tp * w.dp);
  p.ep = ep_group(w);
  return p;
}

double exposed_after(std::span<const double> call_s, double window_s) noexcept {
  const auto n = static_cast<double>(call_s.size());
  double end = 0;
  for (std::size_t k = 0; k < call_s.size(); ++k) {
    const double ready = static_cast<double>(k + 1) / n * window_s;
    end = std::max(end, ready) + call_s[k];
  }
  return call_s.empty() ? 0 : std::max(0.0, end - window_s);
}

double exposed_before(std::span<const double> call_s, double window_s) noexcept {
  const auto n = static_cast<double>(call_s.size());
  double end = 0;
  double delay = 0;
  for (std::size_t k = 0; k < call_s.size(); ++k) {
    end += call_s[k];
    const double needed = static_cast<double>(k) / n * window_s;
    delay = std::max(delay, end - needed);
  }
  return delay;
}

StepBreakdown model_step(const Workload& w, const NetworkModel& net) {
  StepBreakdown s;
  const Placement place = place_ranks(w);
  s.microbatches = w.microbatches();
  s.bubble_fraction = bubble_fraction(w);
  const double m = s.microbatches;

  const Flops micro = training_flops(w, w.micro_batch);
  const double model_parallel = static_cast<double>(w.tp) * w.pp;
  double compute_mb = 0;
  if (w.measured_compute_s_per_microbatch) {
    compute_mb = *w.measured_compute_s_per_microbatch;
  } else {
    compute_mb = micro.hardware / model_parallel / (*w.peak_tflops * 1e12 * *w.achieved_fraction);
  }
  s.compute_s = m * compute_mb;
  // Forward and backward shares of one micro-batch, by FLOPs: the windows the data-parallel
  // communication can hide behind.
  const double forward_mb = compute_mb * micro.forward / micro.hardware;
  const double backward_mb = compute_mb - forward_mb;

  const double tp_bytes = tp_message_bytes(w);
  double tp_call = 0;
  if (w.sequence_parallel) {
    tp_call = net.collective_s(Collective::kReduceScatter, tp_bytes, place.tp) +
              net.collective_s(Collective::kAllgather, tp_bytes, place.tp);
  } else {
    tp_call = net.collective_s(Collective::kAllreduce, tp_bytes, place.tp);
  }
  const double layers_per_gpu = static_cast<double>(w.layers) / w.pp;
  s.tp_s = w.tp == 1 ? 0 : m * layers_per_gpu * tp_collectives_per_layer(w) * tp_call;

  if (w.pp > 1) {
    const double send =
        net.sendrecv_s(pp_message_bytes(w), place.pp_across_nodes, place.pp_concurrent_per_node);
    s.pp_s = m * pp_sends_per_microbatch(w) * send;
  }
  if (w.moe) {
    // Dispatch and combine sit between the router and the experts, and the experts and the
    // next layer: all exposed, as TP's collectives (docs/model.md, "Expert parallelism").
    s.ep_bytes = ep_message_bytes(w);
    s.ep_calls = m * moe_layer_count(w) / static_cast<double>(w.pp) * ep_alltoalls_per_layer(w);
    s.ep_unpriced = net.unpriced(Collective::kAlltoall, place.ep);
    if (!s.ep_unpriced) {
      s.ep_s = s.ep_calls * net.collective_s(Collective::kAlltoall, s.ep_bytes, place.ep);
    }
  }
  s.bubble_s = s.bubble_fraction * (s.compute_s + s.tp_s + s.pp_s + s.ep_s);

  if (w.dp > 1) {
    // One micro-batch through one chunk, forward and backward, with the TP and PP traffic
    // that belongs to it on the tier each crosses.
    const double tp_mb = s.tp_s / m;
    const double tp_forward_share =
        w.tp == 1 ? 0 : 2.0 / static_cast<double>(tp_collectives_per_layer(w));
    const bool tp_inter = place.tp.ranks > place.tp.ranks_per_node;
    const double pp_half = s.pp_s / m / 2;
    const double ep_mb = s.ep_s / m;
    const double ep_forward_share = w.moe ? 2.0 / ep_alltoalls_per_layer(w) : 0;
    const bool ep_inter = place.ep.ranks > place.ep.ranks_per_node;
    const auto unit = [&](double compute, double tp, double ep) {
      UnitTraffic u;
      u.compute_s = compute / w.vp;
      (tp_inter ? u.inter_s : u.intra_s) += tp / w.vp;
      (place.pp_across_nodes ? u.inter_s : u.intra_s) += pp_half / w.vp;
      (ep_inter ? u.inter_s : u.intra_s) += ep / w.vp;
      return u;
    };
    const UnitTraffic fwd = unit(forward_mb, tp_mb * tp_forward_share, ep_mb * ep_forward_share);
    const UnitTraffic bwd =
        unit(backward_mb, tp_mb * (1 - tp_forward_share), ep_mb * (1 - ep_forward_share));
    ChunkSchedule sched;
    sched.stages = w.pp;
    sched.chunks = w.vp;
    sched.microbatches = s.microbatches;
    sched.forward_unit_s = fwd.wall_s();
    sched.backward_unit_s = bwd.wall_s();
    sched.cooldown_idle_s = s.bubble_s;
    const DataParallelTime dpt =
        data_parallel(w, net, place.dp, sched, dp_load(fwd, place.dp), dp_load(bwd, place.dp));
    s.dp_total_s = dpt.total_s;
    s.dp_exposed_s = dpt.exposed_s;
  }
  s.dp_bytes_per_gpu = dp_gradient_bytes(w);
  s.dp_buckets = w.vp * static_cast<int>(std::ceil(s.dp_bytes_per_gpu / w.vp / w.bucket_bytes));

  s.step_s = s.compute_s + s.tp_s + s.pp_s + s.ep_s + s.bubble_s + s.dp_exposed_s;
  s.network_s = s.step_s - s.compute_s * (1 + s.bubble_fraction);
  s.network_share = s.network_s / s.step_s;
  const double gpus = w.gpus();
  s.tokens_per_s_per_gpu = static_cast<double>(w.global_batch) * w.seq_len / (s.step_s * gpus);
  const Flops step = training_flops(w, w.global_batch);
  s.model_flops = step.model;
  s.hardware_flops = step.hardware;
  if (w.peak_tflops) s.mfu = step.model / (s.step_s * gpus * *w.peak_tflops * 1e12);
  return s;
}

}  // namespace ibscope::model
