#include "ibscope/model/transformer.hpp"

#include "ibscope/model/moe.hpp"

namespace ibscope::model {
namespace {

double kv_width(const Workload& w) noexcept {
  return static_cast<double>(w.hidden) * w.kv_heads / w.heads;
}

double attention_matrix_parameters(const Workload& w) noexcept {
  const double h = w.hidden;
  return 2 * h * h + 2 * h * kv_width(w);  // Q, output; K, V
}

// Weights that multiply activations in one dense layer (what the matrix products cost).
double layer_matrix_parameters(const Workload& w) noexcept {
  return attention_matrix_parameters(w) + mlp_matrix_parameters(w, w.ffn_hidden);
}

// Weights each token multiplies in one MoE layer: its top_k (and the shared) experts only.
double moe_layer_active_matrix_parameters(const Workload& w) noexcept {
  return attention_matrix_parameters(w) + moe_mlp_active_parameters(w);
}

double norm_parameters(const Workload& w) noexcept {
  // LayerNorm has a scale and a bias; RMSNorm only a scale.
  return w.arch == Architecture::kGpt ? 2.0 * w.hidden : 1.0 * w.hidden;
}

}  // namespace

double layer_parameters(const Workload& w) noexcept {
  double p = layer_matrix_parameters(w) + 2 * norm_parameters(w);
  if (w.arch == Architecture::kGpt) {
    const double h = w.hidden;
    p += h + 2 * kv_width(w) + h + w.ffn_hidden + h;  // Q K V, output, MLP in, MLP out biases
  }
  return p;
}

double parameters(const Workload& w) noexcept {
  const double h = w.hidden;
  double embeddings = static_cast<double>(w.vocab) * h;
  if (w.arch == Architecture::kGpt) {
    embeddings += static_cast<double>(w.seq_len) * h;  // learned positions; output tied
  } else {
    embeddings *= 2;  // untied output layer
  }
  // An MoE layer swaps its dense MLP for the experts and the router.
  const double moe_swap =
      moe_layer_count(w) * (moe_mlp_parameters(w) - mlp_matrix_parameters(w, w.ffn_hidden));
  return w.layers * layer_parameters(w) + moe_swap + embeddings + norm_parameters(w);
}

Flops training_flops(const Workload& w, double sequences) noexcept {
  const double tokens = sequences * w.seq_len;
  const double attention_core = 4.0 * sequences * w.seq_len * w.seq_len * w.hidden;
  const double layer_forward = 2 * tokens * layer_matrix_parameters(w) + attention_core;
  const int moe_layers = moe_layer_count(w);
  const double moe_forward = 2 * tokens * moe_layer_active_matrix_parameters(w) + attention_core;
  const double layers_forward = (w.layers - moe_layers) * layer_forward + moe_layers * moe_forward;
  const double logits_forward = 2 * tokens * w.hidden * w.vocab;
  Flops f;
  f.forward = layers_forward + logits_forward;
  f.model = 3 * f.forward;
  f.hardware = f.model;
  if (w.recompute == Recompute::kFull) f.hardware += layers_forward;
  if (w.recompute == Recompute::kSelective) f.hardware += w.layers * attention_core;
  return f;
}

double bubble_fraction(const Workload& w) noexcept {
  return static_cast<double>(w.pp - 1) / (static_cast<double>(w.microbatches()) * w.vp);
}

double tp_message_bytes(const Workload& w) noexcept {
  return static_cast<double>(w.micro_batch) * w.seq_len * w.hidden * w.activation_bytes;
}

int tp_collectives_per_layer(const Workload& w) noexcept {
  if (w.tp == 1) return 0;
  return w.recompute == Recompute::kFull ? 6 : 4;
}

double pp_message_bytes(const Workload& w) noexcept {
  const bool split = w.pp_scatter_gather || w.sequence_parallel;
  return tp_message_bytes(w) / (split ? w.tp : 1);
}

int pp_sends_per_microbatch(const Workload& w) noexcept { return w.pp == 1 ? 0 : 2 * w.vp; }

double parameters_per_gpu(const Workload& w) noexcept {
  // Routed experts are spread over the ep ranks of an expert-parallel group as well.
  const double experts = routed_expert_parameters(w);
  const double ep = w.moe ? w.moe->ep : 1;
  return (parameters(w) - experts + experts / ep) / (static_cast<double>(w.tp) * w.pp);
}

double dp_gradient_bytes(const Workload& w) noexcept {
  return parameters_per_gpu(w) * w.grad_bytes;
}

}  // namespace ibscope::model
