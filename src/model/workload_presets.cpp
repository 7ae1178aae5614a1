// The shipped presets, as workload files read by the same parser as any other. Every figure's
// source is in docs/model.md ("Presets"); figures marked "assumed" there are ours, not a
// paper's, and a workload file overrides them. Bucket: 160 MB = 40 M fp32 gradients.
#include <fmt/format.h>

#include <array>
#include <utility>

#include "ibscope/core/error.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {
namespace {

constexpr const char* kGpt3 = R"({
  "name": "gpt3-175b",
  "source": "Narayanan et al., SC21 (arXiv:2104.04473): GPT-3 175B (96 layers, h 12288, 96 heads, s 2048, V 51200), t=8 x p=12, batch 1536, micro-batch 1, on 1536 A100s (d=16); peak: A100 SXM dense bf16; achieved_fraction and bucket size assumed",
  "model": {"arch": "gpt", "layers": 96, "hidden": 12288, "heads": 96, "kv_heads": 96,
            "ffn_hidden": 49152, "seq_len": 2048, "vocab": 51200},
  "batch": {"global": 1536, "micro": 1},
  "parallel": {"tp": 8, "pp": 12, "dp": 16, "vp": 1, "gpus_per_node": 8,
               "sequence_parallel": false, "distributed_optimizer": false,
               "pp_scatter_gather": true},
  "precision": {"activation_bytes": 2, "grad_bytes": 4, "param_bytes": 2},
  "compute": {"peak_tflops": 312, "achieved_fraction": 0.55, "recompute": "full"},
  "data_parallel": {"bucket_bytes": 160000000, "overlap": "grad_reduce"}
})";

constexpr const char* kLlama3_70b = R"({
  "name": "llama3-70b",
  "source": "Llama 3 70B shape from Dubey et al. 2024 (arXiv:2407.21783), Table 3: 80 layers, h 8192, 64 heads, 8 KV heads, FFN 28672, V 128256, s 8192; peak: H100 SXM dense bf16; layout, batch, achieved_fraction and bucket size assumed",
  "model": {"arch": "llama", "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8,
            "ffn_hidden": 28672, "seq_len": 8192, "vocab": 128256},
  "batch": {"global": 1024, "micro": 1},
  "parallel": {"tp": 8, "pp": 4, "dp": 16, "vp": 5, "gpus_per_node": 8,
               "sequence_parallel": true, "distributed_optimizer": true,
               "pp_scatter_gather": true},
  "precision": {"activation_bytes": 2, "grad_bytes": 4, "param_bytes": 2},
  "compute": {"peak_tflops": 989, "achieved_fraction": 0.5, "recompute": "selective"},
  "data_parallel": {"bucket_bytes": 160000000, "overlap": "grad_reduce_and_param_gather"}
})";

constexpr const char* kLlama2_7b = R"({
  "name": "llama2-7b",
  "source": "Llama 2 7B shape from Touvron et al. 2023 (arXiv:2307.09288): 32 layers, h 4096, 32 heads, FFN 11008, V 32000, s 4096, 4M-token batch; peak: H100 SXM dense bf16; layout, achieved_fraction and bucket size assumed",
  "model": {"arch": "llama", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32,
            "ffn_hidden": 11008, "seq_len": 4096, "vocab": 32000},
  "batch": {"global": 1024, "micro": 1},
  "parallel": {"tp": 1, "pp": 1, "dp": 16, "vp": 1, "gpus_per_node": 8,
               "sequence_parallel": false, "distributed_optimizer": true,
               "pp_scatter_gather": true},
  "precision": {"activation_bytes": 2, "grad_bytes": 4, "param_bytes": 2},
  "compute": {"peak_tflops": 989, "achieved_fraction": 0.5, "recompute": "none"},
  "data_parallel": {"bucket_bytes": 160000000, "overlap": "grad_reduce_and_param_gather"}
})";

constexpr const char* kGpt530b = R"({
  "name": "gpt-530b",
  "source": "Narayanan et al., SC21 (arXiv:2104.04473): Table 1 shape of the 529.6B GPT (105 layers, h 20480, 128 heads; s 2048, V 51200 as for all its models), Table 2 PTD-P layout t=8 x p=35, batch 2240, micro-batch 1, full recomputation, on 560 A100s (d=2; 1120 and 2240 in the same table); peak: A100 SXM dense bf16; vp 1, achieved_fraction and bucket size assumed",
  "model": {"arch": "gpt", "layers": 105, "hidden": 20480, "heads": 128, "kv_heads": 128,
            "ffn_hidden": 81920, "seq_len": 2048, "vocab": 51200},
  "batch": {"global": 2240, "micro": 1},
  "parallel": {"tp": 8, "pp": 35, "dp": 2, "vp": 1, "gpus_per_node": 8,
               "sequence_parallel": false, "distributed_optimizer": false,
               "pp_scatter_gather": true},
  "precision": {"activation_bytes": 2, "grad_bytes": 4, "param_bytes": 2},
  "compute": {"peak_tflops": 312, "achieved_fraction": 0.55, "recompute": "full"},
  "data_parallel": {"bucket_bytes": 160000000, "overlap": "grad_reduce"}
})";

constexpr const char* kMegascale175b = R"({
  "name": "megascale-175b",
  "source": "Jiang et al., NSDI 2024, MegaScale (arXiv:2402.15627): Table 1 shape of the 175B model (96 layers, h 12288, 128 heads, t=8, p=8), Table 2 Megatron-LM baseline batch 768 on 256 GPUs (d=4; batch 6144 from 3072 GPUs); s 2048 from Table 2's tokens/s; peak: A100 SXM dense bf16; vocabulary, micro-batch, vp 2, sequence parallelism, distributed optimizer, selective recompute, achieved_fraction and bucket size assumed",
  "model": {"arch": "gpt", "layers": 96, "hidden": 12288, "heads": 128, "kv_heads": 128,
            "ffn_hidden": 49152, "seq_len": 2048, "vocab": 51200},
  "batch": {"global": 768, "micro": 1},
  "parallel": {"tp": 8, "pp": 8, "dp": 4, "vp": 2, "gpus_per_node": 8,
               "sequence_parallel": true, "distributed_optimizer": true,
               "pp_scatter_gather": true},
  "precision": {"activation_bytes": 2, "grad_bytes": 4, "param_bytes": 2},
  "compute": {"peak_tflops": 312, "achieved_fraction": 0.55, "recompute": "selective"},
  "data_parallel": {"bucket_bytes": 160000000, "overlap": "grad_reduce_and_param_gather"}
})";

constexpr const char* kMixtral8x7b = R"({
  "name": "mixtral-8x7b",
  "source": "Mixtral 8x7B shape from Jiang et al. 2024 (arXiv:2401.04088), Table 1: 32 layers, dim 4096, 32 heads, 8 KV heads, hidden_dim 14336, vocab 32000, context_len 32768, 8 experts, top-2 (every layer a sparse MoE layer, Section 2); peak: H100 SXM dense bf16; layout (EP 8 inside a node), batch, achieved_fraction and bucket size assumed",
  "model": {"arch": "llama", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
            "ffn_hidden": 14336, "seq_len": 32768, "vocab": 32000},
  "batch": {"global": 256, "micro": 1},
  "parallel": {"tp": 1, "pp": 1, "dp": 64, "vp": 1, "gpus_per_node": 8,
               "sequence_parallel": false, "distributed_optimizer": true,
               "pp_scatter_gather": true},
  "precision": {"activation_bytes": 2, "grad_bytes": 4, "param_bytes": 2},
  "compute": {"peak_tflops": 989, "achieved_fraction": 0.5, "recompute": "selective"},
  "data_parallel": {"bucket_bytes": 160000000, "overlap": "grad_reduce_and_param_gather"},
  "moe": {"experts": 8, "top_k": 2, "shared_experts": 0, "expert_ffn_hidden": 14336,
          "first_dense": 0, "every": 1, "ep": 8}
})";

constexpr std::array<std::pair<const char*, const char*>, 6> kPresets = {{
    {"gpt3-175b", kGpt3},
    {"gpt-530b", kGpt530b},
    {"megascale-175b", kMegascale175b},
    {"llama3-70b", kLlama3_70b},
    {"llama2-7b", kLlama2_7b},
    {"mixtral-8x7b", kMixtral8x7b},
}};

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : kPresets) names.emplace_back(name);
  return names;
}

Workload preset(std::string_view name) {
  for (const auto& [preset_name, text] : kPresets) {
    if (name == preset_name) {
      return workload_from_text(text, fmt::format("preset {}", name));
    }
  }
  throw UsageError(fmt::format("unknown preset '{}' ({})", name, fmt::join(preset_names(), ", ")));
}

}  // namespace ibscope::model
