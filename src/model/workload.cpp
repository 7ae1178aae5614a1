#include "ibscope/model/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "ibscope/core/error.hpp"
#include "workload_json.hpp"

namespace ibscope::model {
namespace {

using nlohmann::json;

// Reads one JSON object of a workload file. Every error names the source and the JSON path.
class Section {
 public:
  Section(const json& doc, std::string_view source, std::string path, bool required = true)
      : source_(source), path_(std::move(path)) {
    const json* found = &doc;
    if (!path_.empty()) {
      if (!doc.contains(path_)) {
        if (required) fail(path_, "missing");
        found = nullptr;
      } else {
        found = &doc.at(path_);
      }
    }
    if (found != nullptr && !found->is_object()) {
      fail(path_, fmt::format("expected an object, got {}", found->type_name()));
    }
    obj_ = found;
  }

  [[noreturn]] void fail(std::string_view where, std::string_view what) const {
    throw UsageError(fmt::format("{}: {}: {}", source_, where.empty() ? "<top>" : where, what));
  }

  /// Rejects keys outside `known`: a typo would otherwise silently take the default.
  void only(std::initializer_list<const char*> known) const {
    if (obj_ == nullptr) return;
    for (const auto& item : obj_->items()) {
      // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
      const std::string& key = item.key();
      const bool ok =
          std::any_of(known.begin(), known.end(), [&](const char* k) { return key == k; });
      if (!ok) fail(at(key), "unknown field");
    }
  }

  std::optional<int> integer(const char* name, bool required) const {
    const json* v = find(name, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer()) expected(name, "an integer", *v);
    const auto x = v->get<long long>();
    if (x < 1 || x > 1'000'000'000) fail(at(name), fmt::format("{} is out of range [1, 1e9]", x));
    return static_cast<int>(x);
  }
  int integer_or(const char* name, int fallback) const {
    return integer(name, false).value_or(fallback);
  }

  std::optional<double> number(const char* name, bool required) const {
    const json* v = find(name, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) expected(name, "a number", *v);
    const double x = v->get<double>();
    if (!(x > 0)) fail(at(name), fmt::format("{} must be > 0", x));
    return x;
  }

  bool boolean_or(const char* name, bool fallback) const {
    const json* v = find(name, false);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) expected(name, "true or false", *v);
    return v->get<bool>();
  }

  std::optional<std::string> text(const char* name, bool required) const {
    const json* v = find(name, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) expected(name, "a string", *v);
    return v->get<std::string>();
  }

  /// One of `values`, spelled as name_of() spells it; `fallback` when the key is absent.
  template <typename Enum>
  Enum choice(const char* name, std::initializer_list<Enum> values, Enum fallback) const {
    const auto t = text(name, false);
    if (!t) return fallback;
    std::string list;
    for (Enum e : values) {
      if (*t == name_of(e)) return e;
      list += fmt::format("{}{}", list.empty() ? "" : ", ", name_of(e));
    }
    fail(at(name), fmt::format("unknown value '{}' ({})", *t, list));
  }

  std::string at(std::string_view name) const {
    return path_.empty() ? std::string(name) : fmt::format("{}.{}", path_, name);
  }

 private:
  const json* find(const char* name, bool required) const {
    if (obj_ == nullptr || !obj_->contains(name)) {
      if (required) fail(at(name), "missing");
      return nullptr;
    }
    return &obj_->at(name);
  }
  [[noreturn]] void expected(const char* name, const char* what, const json& got) const {
    fail(at(name), fmt::format("expected {}, got {}", what, got.type_name()));
  }

  std::string_view source_;
  std::string path_;
  const json* obj_ = nullptr;
};

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
}

Workload parse_workload(const json& doc, std::string_view source) {
  const Section top(doc, source, "");
  top.only(
      {"name", "source", "model", "batch", "parallel", "precision", "compute", "data_parallel"});
  Workload w;
  w.name = top.text("name", false).value_or("");
  w.source = top.text("source", false).value_or("");

  const Section m(doc, source, "model");
  m.only({"arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab"});
  w.arch = m.choice("arch", {Architecture::kGpt, Architecture::kLlama}, Architecture::kGpt);
  w.layers = *m.integer("layers", true);
  w.hidden = *m.integer("hidden", true);
  w.heads = *m.integer("heads", true);
  w.kv_heads = m.integer_or("kv_heads", w.heads);
  w.ffn_hidden = m.integer_or("ffn_hidden", 4 * w.hidden);
  w.seq_len = *m.integer("seq_len", true);
  w.vocab = *m.integer("vocab", true);

  const Section b(doc, source, "batch");
  b.only({"global", "micro"});
  w.global_batch = *b.integer("global", true);
  w.micro_batch = *b.integer("micro", true);

  const Section p(doc, source, "parallel");
  p.only({"tp", "pp", "dp", "vp", "gpus_per_node", "sequence_parallel", "distributed_optimizer",
          "pp_scatter_gather"});
  w.tp = *p.integer("tp", true);
  w.pp = *p.integer("pp", true);
  w.dp = *p.integer("dp", true);
  w.vp = p.integer_or("vp", 1);
  w.gpus_per_node = *p.integer("gpus_per_node", true);
  w.sequence_parallel = p.boolean_or("sequence_parallel", false);
  w.distributed_optimizer = p.boolean_or("distributed_optimizer", false);
  w.pp_scatter_gather = p.boolean_or("pp_scatter_gather", true);

  const Section pr(doc, source, "precision", false);
  pr.only({"activation_bytes", "grad_bytes", "param_bytes"});
  w.activation_bytes = pr.integer_or("activation_bytes", w.activation_bytes);
  w.grad_bytes = pr.integer_or("grad_bytes", w.grad_bytes);
  w.param_bytes = pr.integer_or("param_bytes", w.param_bytes);

  const Section c(doc, source, "compute");
  c.only({"peak_tflops", "achieved_fraction", "measured_s_per_microbatch", "recompute"});
  w.peak_tflops = c.number("peak_tflops", false);
  w.achieved_fraction = c.number("achieved_fraction", false);
  w.measured_compute_s_per_microbatch = c.number("measured_s_per_microbatch", false);
  w.recompute = c.choice("recompute", {Recompute::kNone, Recompute::kSelective, Recompute::kFull},
                         Recompute::kNone);

  const Section d(doc, source, "data_parallel");
  d.only({"bucket_bytes", "overlap"});
  w.bucket_bytes = *d.number("bucket_bytes", true);
  w.overlap = d.choice("overlap",
                       {Overlap::kNone, Overlap::kGradReduce, Overlap::kGradReduceAndParamGather},
                       Overlap::kGradReduce);

  validate(w, source);
  return w;
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

Workload workload_from_text(std::string_view text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double (1e400).
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  return parse_workload(doc, source);
}

std::string workload_json_text(const Workload& w) { return to_json(w).dump(2); }

nlohmann::ordered_json to_json(const Workload& w) {
  nlohmann::ordered_json compute = nlohmann::ordered_json::object();
  if (w.peak_tflops) compute["peak_tflops"] = *w.peak_tflops;
  if (w.achieved_fraction) compute["achieved_fraction"] = *w.achieved_fraction;
  if (w.measured_compute_s_per_microbatch) {
    compute["measured_s_per_microbatch"] = *w.measured_compute_s_per_microbatch;
  }
  compute["recompute"] = name_of(w.recompute);
  return {
      {"name", w.name},
      {"source", w.source},
      {"model",
       {{"arch", name_of(w.arch)},
        {"layers", w.layers},
        {"hidden", w.hidden},
        {"heads", w.heads},
        {"kv_heads", w.kv_heads},
        {"ffn_hidden", w.ffn_hidden},
        {"seq_len", w.seq_len},
        {"vocab", w.vocab}}},
      {"batch", {{"global", w.global_batch}, {"micro", w.micro_batch}}},
      {"parallel",
       {{"tp", w.tp},
        {"pp", w.pp},
        {"dp", w.dp},
        {"vp", w.vp},
        {"gpus_per_node", w.gpus_per_node},
        {"sequence_parallel", w.sequence_parallel},
        {"distributed_optimizer", w.distributed_optimizer},
        {"pp_scatter_gather", w.pp_scatter_gather}}},
      {"precision",
       {{"activation_bytes", w.activation_bytes},
        {"grad_bytes", w.grad_bytes},
        {"param_bytes", w.param_bytes}}},
      {"compute", compute},
      {"data_parallel", {{"bucket_bytes", w.bucket_bytes}, {"overlap", name_of(w.overlap)}}},
  };
}

}  // namespace ibscope::model
