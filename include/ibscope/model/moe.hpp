#pragma once
/// Pure mixture-of-experts arithmetic for one workload (docs/model.md, "Expert parallelism"):
/// how many layers are MoE layers, the expert weights they add, what a token computes in one,
/// and the bytes of the expert-parallel all-to-alls. No network, no I/O. A workload without
/// `moe` is dense: every function here then gives 0 (or the dense figure).

#include "ibscope/model/network.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// MoE layers of the model (0 when dense): ceil((l - first_dense) / every).
int moe_layer_count(const Workload& w) noexcept;
/// Matrix parameters of one MLP of width `ffn`: 2 h ffn (GeLU) or 3 h ffn (SwiGLU, kLlama).
double mlp_matrix_parameters(const Workload& w, int ffn) noexcept;
/// Matrix parameters of one MoE layer's MLP part: (experts + shared) expert MLPs and the
/// router (h x experts).
double moe_mlp_parameters(const Workload& w) noexcept;
/// Matrix parameters one token multiplies in an MoE layer's MLP part: (top_k + shared) expert
/// MLPs and the router.
double moe_mlp_active_parameters(const Workload& w) noexcept;
/// Routed-expert parameters of the whole model: MoE layers x experts x expert MLP. These are
/// spread over ep ranks (and t p as every weight); the rest is replicated over data parallel.
double routed_expert_parameters(const Workload& w) noexcept;

/// Tokens one GPU routes per micro-batch: b s, / t with sequence parallelism (each tensor rank
/// holds s / t of the sequence).
double ep_tokens_per_microbatch(const Workload& w) noexcept;
/// Bytes of one expert-parallel all-to-all (one rank's whole send buffer, the size `ibscope
/// alltoall` reports): tokens x top_k x h x activation bytes, x capacity_factor when given
/// (padded buffers). Dispatch and combine move the same bytes (the combine returns what the
/// dispatch sent). 0 when dense.
double ep_message_bytes(const Workload& w) noexcept;
/// All-to-alls per MoE layer per micro-batch: dispatch + combine forward, the same two
/// backward (their gradients), + 2 for the recomputed forward with full recompute; 0 when
/// dense.
int ep_alltoalls_per_layer(const Workload& w) noexcept;
/// One expert-parallel group, from Megatron-LM's order (EP groups are consecutive runs of a
/// data-parallel group, whose neighbours are t ranks apart): min(ep, G / t) ranks per node
/// when t < G, else 1; every GPU is in one group, so G / that many groups run at once per
/// node. A group of 1 rank when dense.
Group ep_group(const Workload& w) noexcept;

}  // namespace ibscope::model
