// The shipped presets. Every figure's source is in docs/model.md ("Presets"); figures marked
// "assumed" there are ours, not a paper's, and a workload file overrides them.
#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {
namespace {

constexpr double kMegatronMinBucketBytes = 40e6 * 4;  // 40 M fp32 gradients

Workload gpt3_175b() {
  Workload w;
  w.name = "gpt3-175b";
  w.source =
      "Narayanan et al., SC21 (arXiv:2104.04473): GPT-3 175B (96 layers, h 12288, 96 heads, "
      "s 2048, V 51200), t=8 x p=12, batch 1536, micro-batch 1, on 1536 A100s (d=16); "
      "achieved_fraction and bucket size assumed";
  w.arch = Architecture::kGpt;
  w.layers = 96;
  w.hidden = 12288;
  w.heads = 96;
  w.kv_heads = 96;
  w.ffn_hidden = 4 * 12288;
  w.seq_len = 2048;
  w.vocab = 51200;
  w.global_batch = 1536;
  w.micro_batch = 1;
  w.tp = 8;
  w.pp = 12;
  w.dp = 16;
  w.vp = 1;
  w.gpus_per_node = 8;
  w.peak_tflops = 312;  // A100 SXM dense bf16
  w.achieved_fraction = 0.55;
  w.recompute = Recompute::kFull;
  w.bucket_bytes = kMegatronMinBucketBytes;
  w.overlap = Overlap::kGradReduce;
  return w;
}

Workload llama3_70b() {
  Workload w;
  w.name = "llama3-70b";
  w.source =
      "Llama 3 70B shape from Dubey et al. 2024 (arXiv:2407.21783), Table 3: 80 layers, "
      "h 8192, 64 heads, 8 KV heads, FFN 28672, V 128256, s 8192; layout, batch, "
      "achieved_fraction and bucket size assumed";
  w.arch = Architecture::kLlama;
  w.layers = 80;
  w.hidden = 8192;
  w.heads = 64;
  w.kv_heads = 8;
  w.ffn_hidden = 28672;
  w.seq_len = 8192;
  w.vocab = 128256;
  w.global_batch = 1024;
  w.micro_batch = 1;
  w.tp = 8;
  w.pp = 4;
  w.dp = 16;
  w.vp = 5;
  w.gpus_per_node = 8;
  w.sequence_parallel = true;
  w.distributed_optimizer = true;
  w.peak_tflops = 989;  // H100 SXM dense bf16
  w.achieved_fraction = 0.5;
  w.recompute = Recompute::kSelective;
  w.bucket_bytes = kMegatronMinBucketBytes;
  w.overlap = Overlap::kGradReduceAndParamGather;
  return w;
}

Workload llama2_7b() {
  Workload w;
  w.name = "llama2-7b";
  w.source =
      "Llama 2 7B shape from Touvron et al. 2023 (arXiv:2307.09288): 32 layers, h 4096, "
      "32 heads, FFN 11008, V 32000, s 4096, 4M-token batch; layout, achieved_fraction and "
      "bucket size assumed";
  w.arch = Architecture::kLlama;
  w.layers = 32;
  w.hidden = 4096;
  w.heads = 32;
  w.kv_heads = 32;
  w.ffn_hidden = 11008;
  w.seq_len = 4096;
  w.vocab = 32000;
  w.global_batch = 1024;
  w.micro_batch = 1;
  w.tp = 1;
  w.pp = 1;
  w.dp = 16;
  w.gpus_per_node = 8;
  w.distributed_optimizer = true;
  w.peak_tflops = 989;  // H100 SXM dense bf16
  w.achieved_fraction = 0.5;
  w.bucket_bytes = kMegatronMinBucketBytes;
  w.overlap = Overlap::kGradReduceAndParamGather;
  return w;
}

}  // namespace

std::vector<std::string> preset_names() { return {"gpt3-175b", "llama3-70b", "llama2-7b"}; }

Workload preset(std::string_view name) {
  Workload w;
  if (name == "gpt3-175b") {
    w = gpt3_175b();
  } else if (name == "llama3-70b") {
    w = llama3_70b();
  } else if (name == "llama2-7b") {
    w = llama2_7b();
  } else {
    throw UsageError(fmt::format("unknown preset '{}' ({})", name,
                                 fmt::join(preset_names(), ", ")));
  }
  validate(w, fmt::format("preset {}", name));
  return w;
}

}  // namespace ibscope::model
