#include "ibscope/model/workload.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "ibscope/core/error.hpp"

namespace ibscope::model {
namespace {

void check(bool ok, std::string_view source, std::string_view where, const std::string& what) {
  if (!ok) throw UsageError(fmt::format("{}: {}: {}", source, where, what));
}

}  // namespace

std::string_view name_of(Architecture a) noexcept {
  return a == Architecture::kGpt ? "gpt" : "llama";
}

std::string_view name_of(Recompute r) noexcept {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

std::string_view name_of(Overlap o) noexcept {
  switch (o) {
    case Overlap::kNone:
      return "none";
    case Overlap::kGradReduce:
      return "grad_reduce";
    case Overlap::kGradReduceAndParamGather:
      return "grad_reduce_and_param_gather";
  }
  return "?";
}

int Moe::moe_layers(int layers) const noexcept {
  if (first_dense >= layers || every < 1) return 0;
  return (layers - first_dense + every - 1) / every;
}

namespace {

void validate_moe(const Workload& w, std::string_view source) {
  const Moe& e = *w.moe;
  const auto positive = [&](int v, const char* where) {
    check(v >= 1, source, where, fmt::format("{} must be >= 1", v));
  };
  positive(e.experts, "moe.experts");
  positive(e.top_k, "moe.top_k");
  positive(e.expert_ffn_hidden, "moe.expert_ffn_hidden");
  positive(e.every, "moe.every");
  positive(e.ep, "moe.ep");
  check(e.shared_experts >= 0, source, "moe.shared_experts", "must be >= 0");
  check(e.first_dense >= 0, source, "moe.first_dense", "must be >= 0");
  check(e.top_k <= e.experts, source, "moe.top_k",
        fmt::format("top_k {} is more than the {} experts", e.top_k, e.experts));
  check(e.moe_layers(w.layers) >= 1, source, "moe.first_dense",
        fmt::format("{} dense layers leave no MoE layer of {}", e.first_dense, w.layers));
  check(e.experts % e.ep == 0, source, "moe.ep",
        fmt::format("ep {} does not divide the {} experts", e.ep, e.experts));
  // Megatron-LM carves the expert-parallel groups out of the data-parallel ranks.
  check(w.dp % e.ep == 0, source, "moe.ep",
        fmt::format("ep {} does not divide dp {} (expert-parallel groups are made of "
                    "data-parallel ranks)",
                    e.ep, w.dp));
  const int g = w.gpus_per_node;
  if (w.tp < g) {
    const int q = g / w.tp;
    check(q % e.ep == 0 || e.ep % q == 0, source, "moe.ep",
          fmt::format("ep {} does not fill {}-GPU nodes evenly with tp {}", e.ep, g, w.tp));
  }
  if (e.capacity_factor) {
    check(*e.capacity_factor > 0 && std::isfinite(*e.capacity_factor), source,
          "moe.capacity_factor", "must be > 0");
  }
}

}  // namespace

void validate(const Workload& w, std::string_view source) {
  const auto positive = [&](int v, const char* where) {
    check(v >= 1, source, where, fmt::format("{} must be >= 1", v));
  };
  positive(w.layers, "model.layers");
  positive(w.hidden, "model.hidden");
  positive(w.heads, "model.heads");
  positive(w.kv_heads, "model.kv_heads");
  positive(w.ffn_hidden, "model.ffn_hidden");
  positive(w.seq_len, "model.seq_len");
  positive(w.vocab, "model.vocab");
  positive(w.global_batch, "batch.global");
  positive(w.micro_batch, "batch.micro");
  positive(w.tp, "parallel.tp");
  positive(w.pp, "parallel.pp");
  positive(w.dp, "parallel.dp");
  positive(w.vp, "parallel.vp");
  positive(w.gpus_per_node, "parallel.gpus_per_node");
  positive(w.activation_bytes, "precision.activation_bytes");
  positive(w.grad_bytes, "precision.grad_bytes");
  positive(w.param_bytes, "precision.param_bytes");

  // Products of sizes below are ints: keep them far from overflow.
  constexpr long long kMaxGpus = 1 << 24;
  const long long gpus = static_cast<long long>(w.tp) * w.pp * w.dp;
  check(gpus <= kMaxGpus, source, "parallel",
        fmt::format("tp x pp x dp = {} GPUs is more than {}", gpus, kMaxGpus));
  check(static_cast<long long>(w.micro_batch) * w.dp <= w.global_batch, source, "batch.micro",
        fmt::format("micro batch {} x dp {} is larger than the global batch {}", w.micro_batch,
                    w.dp, w.global_batch));
  check(static_cast<long long>(w.pp) * w.vp <= w.layers, source, "parallel.vp",
        fmt::format("pp {} x vp {} is more than the {} layers", w.pp, w.vp, w.layers));

  check(w.hidden % w.heads == 0, source, "model.heads",
        fmt::format("hidden {} is not divisible by heads {}", w.hidden, w.heads));
  check(w.heads % w.kv_heads == 0, source, "model.kv_heads",
        fmt::format("heads {} are not divisible by kv_heads {}", w.heads, w.kv_heads));
  check(w.kv_heads % w.tp == 0, source, "parallel.tp",
        fmt::format("tp {} does not divide the {} key/value heads (nor the {} heads)", w.tp,
                    w.kv_heads, w.heads));
  check(w.ffn_hidden % w.tp == 0, source, "parallel.tp",
        fmt::format("tp {} does not divide ffn_hidden {}", w.tp, w.ffn_hidden));
  check(w.global_batch % (w.micro_batch * w.dp) == 0, source, "batch.global",
        fmt::format("global batch {} is not divisible by micro batch {} x dp {}", w.global_batch,
                    w.micro_batch, w.dp));
  check(w.layers % (w.pp * w.vp) == 0, source, "model.layers",
        fmt::format("{} layers are not divisible by pp {} x vp {}", w.layers, w.pp, w.vp));
  if (w.vp > 1) {
    check(w.pp > 1, source, "parallel.vp", "virtual stages (vp > 1) need pp > 1");
    // Megatron-LM's interleaved schedule runs micro-batches in groups of pp.
    check(w.microbatches() % w.pp == 0, source, "parallel.vp",
          fmt::format("the interleaved schedule needs micro-batches ({}) divisible by pp {}",
                      w.microbatches(), w.pp));
  }
  const int g = w.gpus_per_node;
  check(w.gpus() % g == 0, source, "parallel.gpus_per_node",
        fmt::format("tp x pp x dp = {} GPUs is not a whole number of {}-GPU nodes", w.gpus(), g));
  // Even placement (docs/model.md, "Rank placement"): a tensor group fills part of a node or
  // whole nodes, and the data-parallel ranks next to it do the same.
  check(g % w.tp == 0 || w.tp % g == 0, source, "parallel.tp",
        fmt::format("tp {} neither divides nor is a multiple of {} GPUs per node", w.tp, g));
  if (w.tp < g) {
    const int q = g / w.tp;
    check(q % w.dp == 0 || w.dp % q == 0, source, "parallel.dp",
          fmt::format("dp {} does not fill {}-GPU nodes evenly with tp {}", w.dp, g, w.tp));
  }

  if (w.measured_compute_s_per_microbatch) {
    check(*w.measured_compute_s_per_microbatch > 0, source, "compute.measured_s_per_microbatch",
          "must be > 0");
  } else {
    check(w.peak_tflops.has_value() && w.achieved_fraction.has_value(), source, "compute",
          "give peak_tflops and achieved_fraction, or measured_s_per_microbatch");
  }
  if (w.peak_tflops) check(*w.peak_tflops > 0, source, "compute.peak_tflops", "must be > 0");
  if (w.achieved_fraction) {
    check(*w.achieved_fraction > 0 && *w.achieved_fraction <= 1, source,
          "compute.achieved_fraction", fmt::format("{} is not in (0, 1]", *w.achieved_fraction));
  }
  check(w.bucket_bytes >= 1, source, "data_parallel.bucket_bytes", "must be >= 1 byte");
  if (w.moe) validate_moe(w, source);
}

Workload load_workload(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot open the workload file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  Workload w = workload_from_text(text.str(), path.string());
  if (w.name.empty()) w.name = path.stem().string();
  return w;
}

}  // namespace ibscope::model
