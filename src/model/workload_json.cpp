#include "workload_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "ibscope/core/error.hpp"

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
  /// An integer that may be 0 (a count of things that may be absent).
  int count_or(const char* name, int fallback) const {
    const json* v = find(name, false);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer()) expected(name, "an integer", *v);
    const auto x = v->get<long long>();
    if (x < 0 || x > 1'000'000'000) fail(at(name), fmt::format("{} is out of range [0, 1e9]", x));
    return static_cast<int>(x);
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

}  // namespace

Workload parse_workload(const json& doc, std::string_view source) {
  const Section top(doc, source, "");
  top.only({"name", "source", "model", "batch", "parallel", "precision", "compute", "data_parallel",
            "moe"});
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

  const Section e(doc, source, "moe", false);
  if (doc.contains("moe")) {
    e.only({"experts", "top_k", "shared_experts", "expert_ffn_hidden", "first_dense", "every", "ep",
            "capacity_factor"});
    Moe moe;
    moe.experts = *e.integer("experts", true);
    moe.top_k = *e.integer("top_k", true);
    moe.shared_experts = e.count_or("shared_experts", 0);
    moe.expert_ffn_hidden = e.integer_or("expert_ffn_hidden", w.ffn_hidden);
    moe.first_dense = e.count_or("first_dense", 0);
    moe.every = e.integer_or("every", 1);
    moe.ep = *e.integer("ep", true);
    moe.capacity_factor = e.number("capacity_factor", false);
    w.moe = moe;
  }

  validate(w, source);
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
  nlohmann::ordered_json doc = {
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
  if (w.moe) {
    const Moe& e = *w.moe;
    nlohmann::ordered_json moe = {{"experts", e.experts},
                                  {"top_k", e.top_k},
                                  {"shared_experts", e.shared_experts},
                                  {"expert_ffn_hidden", e.expert_ffn_hidden},
                                  {"first_dense", e.first_dense},
                                  {"every", e.every},
                                  {"ep", e.ep}};
    if (e.capacity_factor) moe["capacity_factor"] = *e.capacity_factor;
    doc["moe"] = moe;
  }
  return doc;
}

}  // namespace ibscope::model
