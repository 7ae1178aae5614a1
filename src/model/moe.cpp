#include "ibscope/model/moe.hpp"

#include <algorithm>

namespace ibscope::model {

int moe_layer_count(const Workload& w) noexcept { return w.moe ? w.moe->moe_layers(w.layers) : 0; }

double mlp_matrix_parameters(const Workload& w, int ffn) noexcept {
  return (w.arch == Architecture::kLlama ? 3.0 : 2.0) * w.hidden * ffn;
}

double moe_mlp_parameters(const Workload& w) noexcept {
  if (!w.moe) return 0;
  const Moe& e = *w.moe;
  return (e.experts + e.shared_experts) * mlp_matrix_parameters(w, e.expert_ffn_hidden) +
         static_cast<double>(w.hidden) * e.experts;
}

double moe_mlp_active_parameters(const Workload& w) noexcept {
  if (!w.moe) return 0;
  const Moe& e = *w.moe;
  return (e.top_k + e.shared_experts) * mlp_matrix_parameters(w, e.expert_ffn_hidden) +
         static_cast<double>(w.hidden) * e.experts;
}

double routed_expert_parameters(const Workload& w) noexcept {
  if (!w.moe) return 0;
  return static_cast<double>(moe_layer_count(w)) * w.moe->experts *
         mlp_matrix_parameters(w, w.moe->expert_ffn_hidden);
}

double ep_tokens_per_microbatch(const Workload& w) noexcept {
  const double tokens = static_cast<double>(w.micro_batch) * w.seq_len;
  return w.sequence_parallel ? tokens / w.tp : tokens;
}

double ep_message_bytes(const Workload& w) noexcept {
  if (!w.moe) return 0;
  const double bytes = ep_tokens_per_microbatch(w) * w.moe->top_k * w.hidden * w.activation_bytes;
  return bytes * w.moe->capacity_factor.value_or(1.0);
}

int ep_alltoalls_per_layer(const Workload& w) noexcept {
  if (!w.moe) return 0;
  return w.recompute == Recompute::kFull ? 6 : 4;
}

Group ep_group(const Workload& w) noexcept {
  if (!w.moe) return {};
  const int g = w.gpus_per_node;
  const int ep = w.moe->ep;
  const int per_node = w.tp >= g ? 1 : std::min(ep, g / w.tp);
  return {ep, per_node, g / per_node};
}

}  // namespace ibscope::model
