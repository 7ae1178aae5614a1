#include "ibscope/model/scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ibscope/core/error.hpp"

namespace ibscope::model {
namespace {

int parse_positive(std::string_view text, std::string_view what, std::string_view context) {
  long value = 0;
  bool ok = !text.empty() && text.size() <= 9;
  for (char ch : text) {
    if (ch < '0' || ch > '9') ok = false;
  }
  if (ok) {
    for (char ch : text) value = value * 10 + (ch - '0');
  }
  if (!ok || value < 1) {
    throw UsageError(fmt::format("{}: {} '{}' is not a whole number >= 1", context, what, text));
  }
  return static_cast<int>(value);
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::vector<int> parse_scale_nodes(std::string_view text) {
  const std::string context = fmt::format("--scale '{}'", text);
  if (text.substr(0, 6) != "nodes=") {
    throw UsageError(fmt::format("{}: expected nodes=A,B,C or nodes=A..B", context));
  }
  const std::string_view list = text.substr(6);
  std::vector<int> nodes;
  if (const auto dots = list.find(".."); dots != std::string_view::npos) {
    const int from = parse_positive(list.substr(0, dots), "node count", context);
    const int to = parse_positive(list.substr(dots + 2), "node count", context);
    if (from > to) {
      throw UsageError(fmt::format("{}: the range {}..{} runs backwards", context, from, to));
    }
    for (long n = from; n < to; n *= 2) nodes.push_back(static_cast<int>(n));
    nodes.push_back(to);
  } else {
    std::size_t start = 0;
    while (start <= list.size()) {
      const auto comma = std::min(list.find(',', start), list.size());
      nodes.push_back(parse_positive(list.substr(start, comma - start), "node count", context));
      start = comma + 1;
    }
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::map<int, int> batch_per_scale_from_text(std::string_view text, std::string_view source) {
  std::map<int, int> batch;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view l = trimmed(line);
    if (l.empty() || l.front() == '#') continue;
    const std::string context = fmt::format("{}:{}", source, number);
    if (!header) {
      if (l != "nodes,global_batch") {
        throw UsageError(
            fmt::format("{}: expected the header 'nodes,global_batch', got '{}'", context, l));
      }
      header = true;
      continue;
    }
    const auto comma = l.find(',');
    if (comma == std::string_view::npos) {
      throw UsageError(fmt::format("{}: expected NODES,GLOBAL_BATCH, got '{}'", context, l));
    }
    const int nodes = parse_positive(trimmed(l.substr(0, comma)), "nodes", context);
    const int b = parse_positive(trimmed(l.substr(comma + 1)), "global_batch", context);
    if (!batch.emplace(nodes, b).second) {
      throw UsageError(fmt::format("{}: {} nodes given twice", context, nodes));
    }
  }
  if (!header) throw UsageError(fmt::format("{}: empty (expected nodes,global_batch)", source));
  return batch;
}

std::map<int, int> load_batch_per_scale(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot read the batch file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return batch_per_scale_from_text(text.str(), path.string());
}

std::vector<ScaleRow> scale_curve(const Workload& w, const ClusterNetwork& cluster,
                                  const std::vector<int>& nodes,
                                  const std::map<int, int>& batch_per_scale,
                                  const NetworkFactory& factory) {
  std::vector<ScaleRow> rows;
  for (int n : nodes) {
    const std::string context = fmt::format("--scale: {} nodes", n);
    ScaleRow r;
    r.nodes = n;
    r.workload = w;
    const long gpus = static_cast<long>(n) * w.gpus_per_node;
    const long model_parallel = static_cast<long>(w.tp) * w.pp;
    if (gpus % model_parallel != 0) {
      throw UsageError(fmt::format("{}: {} GPUs are not a multiple of tp x pp = {}", context, gpus,
                                   model_parallel));
    }
    r.workload.dp = static_cast<int>(gpus / model_parallel);
    if (!batch_per_scale.empty()) {
      const auto it = batch_per_scale.find(n);
      if (it == batch_per_scale.end()) {
        throw UsageError(fmt::format("{}: the batch file has no line for {} nodes", context, n));
      }
      r.workload.global_batch = it->second;
    }
    validate(r.workload, context);
    r.step = model_step(r.workload, *factory(cluster_for(cluster, r.workload)));
    rows.push_back(std::move(r));
  }
  if (!rows.empty()) {
    const double base = rows.front().step.tokens_per_s_per_gpu;
    for (ScaleRow& r : rows) r.efficiency = r.step.tokens_per_s_per_gpu / base;
  }
  return rows;
}

std::string scale_csv_text(const std::vector<ScaleRow>& rows) {
  std::string out =
      "nodes,gpus,tp,pp,dp,vp,global_batch,microbatches,step_s,network_s,network_pct,"
      "tokens_per_s_per_gpu,efficiency_pct,mfu_pct\n";
  for (const ScaleRow& r : rows) {
    const Workload& w = r.workload;
    out += fmt::format("{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.6g},{:.6g},{:.6g},{}\n", r.nodes,
                       w.gpus(), w.tp, w.pp, w.dp, w.vp, w.global_batch, r.step.microbatches,
                       r.step.step_s, r.step.network_s, 100 * r.step.network_share,
                       r.step.tokens_per_s_per_gpu, 100 * r.efficiency,
                       r.step.mfu ? fmt::format("{:.6g}", 100 * *r.step.mfu) : "");
  }
  return out;
}

}  // namespace ibscope::model
