#include "ibscope/model/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

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

DataParallelTime data_parallel(const Workload& w, const NetworkModel& net, const Group& g,
                               double forward_s, double backward_s) {
  const std::vector<double> buckets = bucket_sizes(dp_gradient_bytes(w), w.bucket_bytes);
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
  DataParallelTime t;
  double reduce_total = 0;
  double gather_total = 0;
  for (double x : reduce) reduce_total += x;
  for (double x : gather) gather_total += x;
  t.total_s = reduce_total + gather_total;
  switch (w.overlap) {
    case Overlap::kNone:
      t.exposed_s = t.total_s;
      break;
    case Overlap::kGradReduce:
      t.exposed_s = exposed_after(reduce, backward_s) + gather_total;
      break;
    case Overlap::kGradReduceAndParamGather:
      t.exposed_s = exposed_after(reduce, backward_s) + exposed_before(gather, forward_s);
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
  s.bubble_s = s.bubble_fraction * (s.compute_s + s.tp_s + s.pp_s);

  if (w.dp > 1) {
    const DataParallelTime dpt = data_parallel(w, net, place.dp, forward_mb, backward_mb);
    s.dp_total_s = dpt.total_s;
    s.dp_exposed_s = dpt.exposed_s;
  }
  s.dp_bytes_per_gpu = dp_gradient_bytes(w);
  s.dp_buckets = static_cast<int>(std::ceil(s.dp_bytes_per_gpu / w.bucket_bytes));

  s.step_s = s.compute_s + s.tp_s + s.pp_s + s.bubble_s + s.dp_exposed_s;
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
