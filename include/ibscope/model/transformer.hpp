#pragma once
/// Pure transformer arithmetic for one workload: parameters, FLOPs, the pipeline bubble and
/// the bytes each kind of parallelism moves. No network, no I/O. Formulas and sources:
/// docs/model.md, "Training step" (Narayanan et al. SC21; Korthikanti et al. 2022).

#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// Parameters of one transformer layer: attention (Q and output h x h, K and V h x h_kv with
/// h_kv = h kv_heads / heads), MLP (2 or, gated, 3 matrices h x ffn_hidden), norms, and for
/// kGpt the biases. GPT with ffn 4h and no GQA: 12 h^2 + 13 h.
double layer_parameters(const Workload& w) noexcept;
/// All parameters: layers, word embedding V h (twice when not tied), learned positions s h
/// (kGpt), final norm. GPT: 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) + 2h. MoE layers have
/// their experts and router in place of the dense MLP (model/moe.hpp).
double parameters(const Workload& w) noexcept;

/// FLOPs of one training pass (forward + backward) over `sequences` sequences, whole model.
struct Flops {
  double forward = 0;   ///< one forward pass
  double model = 0;     ///< 3 x forward: what MFU counts
  double hardware = 0;  ///< model + recomputation: what the GPUs execute
};
/// Forward per layer: 2 x tokens x matrix parameters + 4 b s^2 h (attention scores and
/// attention over values); logits 2 b s h V. GPT: model = 72 b l s h^2 (1 + s/(6h) +
/// V/(12 h l)); full recompute adds one forward of every layer (96 b s l h^2 (1 + s/(6h) +
/// V/(16 l h))); selective adds the attention core, 4 b s^2 h per layer. In an MoE layer a token
/// multiplies its top_k and the shared experts and the router, not every expert.
Flops training_flops(const Workload& w, double sequences) noexcept;

/// (p - 1) / (m v): idle share of the pipeline relative to its busy time; 0 for p = 1.
double bubble_fraction(const Workload& w) noexcept;

/// Bytes of one tensor-parallel collective (the full vector): b s h x activation bytes.
double tp_message_bytes(const Workload& w) noexcept;
/// Tensor-parallel collectives per layer per micro-batch: 2 forward + 2 backward, + 2 for the
/// recomputed forward with full recompute; 0 when tp == 1. Each is an all-reduce, or with
/// sequence parallelism a reduce-scatter plus an all-gather of the same vector.
int tp_collectives_per_layer(const Workload& w) noexcept;
/// Bytes a GPU sends at one pipeline boundary per direction per micro-batch:
/// b s h x activation bytes, / t with scatter/gather or sequence parallelism.
double pp_message_bytes(const Workload& w) noexcept;
/// Pipeline sends per GPU per micro-batch: v forward + v backward (2v); 0 for pp == 1.
int pp_sends_per_microbatch(const Workload& w) noexcept;
/// Parameters one GPU holds: P / (t p) (embeddings spread evenly: an approximation); with MoE
/// the routed experts' share is further divided by ep (model/moe.hpp).
double parameters_per_gpu(const Workload& w) noexcept;
/// Gradient bytes one GPU reduces per step: P / (t p) x gradient bytes.
double dp_gradient_bytes(const Workload& w) noexcept;

}  // namespace ibscope::model
