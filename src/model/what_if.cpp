#include "ibscope/model/what_if.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <regex>

#include "ibscope/core/error.hpp"

namespace ibscope::model {
namespace {

double parse_factor(std::string_view item, std::string_view value) {
  double x = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (ec != std::errc() || end != value.data() + value.size() || !(x > 0) || !std::isfinite(x)) {
    throw UsageError(fmt::format("--what-if '{}': '{}' is not a factor > 0", item, value));
  }
  return x;
}

int parse_count(std::string_view item, std::string_view value) {
  int x = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (ec != std::errc() || end != value.data() + value.size() || x < 1) {
    throw UsageError(fmt::format("--what-if '{}': '{}' is not a count >= 1", item, value));
  }
  return x;
}

WhatIf parse_one(std::string_view item) {
  const auto eq = item.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError(fmt::format(
        "--what-if '{}': expected KEY=VALUE (inter-bw, inter-lat, intra-bw, intra-lat, nodes, "
        "layout)",
        item));
  }
  const std::string_view key = item.substr(0, eq);
  const std::string_view value = item.substr(eq + 1);
  WhatIf w;
  w.label = std::string(item);
  if (key == "inter-bw" || key == "inter-lat" || key == "intra-bw" || key == "intra-lat") {
    w.kind = key == "inter-bw"    ? WhatIf::Kind::kInterBw
             : key == "inter-lat" ? WhatIf::Kind::kInterLatency
             : key == "intra-bw"  ? WhatIf::Kind::kIntraBw
                                  : WhatIf::Kind::kIntraLatency;
    w.factor = parse_factor(item, value);
  } else if (key == "nodes") {
    w.kind = WhatIf::Kind::kNodes;
    w.nodes = parse_count(item, value);
  } else if (key == "layout") {
    static const std::regex kLayout(R"(tp(\d+)pp(\d+)dp(\d+)(vp(\d+))?)");
    std::cmatch match;
    if (!std::regex_match(value.data(), value.data() + value.size(), match, kLayout)) {
      throw UsageError(fmt::format("--what-if '{}': expected layout=tpNppNdpN[vpN]", item));
    }
    w.kind = WhatIf::Kind::kLayout;
    w.tp = parse_count(item, match.str(1));
    w.pp = parse_count(item, match.str(2));
    w.dp = parse_count(item, match.str(3));
    w.vp = match[5].matched ? parse_count(item, match.str(5)) : 0;
  } else {
    throw UsageError(fmt::format(
        "--what-if '{}': unknown key '{}' (inter-bw, inter-lat, intra-bw, intra-lat, nodes, "
        "layout)",
        item, key));
  }
  return w;
}

// A tier's bandwidth and, with it, the all-to-all fit of the same tier (the same links).
void scale_bw(ClusterNetwork& c, bool inter, double factor) {
  (inter ? c.inter : c.intra).bw_gbps *= factor;
  auto& alltoall = inter ? c.alltoall_inter : c.alltoall_intra;
  if (alltoall) alltoall->bw_gbps *= factor;
}

double step_s(const Workload& w, const ClusterNetwork& cluster, const NetworkFactory& factory) {
  return model_step(w, *factory(cluster)).step_s;
}

}  // namespace

std::vector<WhatIf> parse_what_ifs(std::string_view text) {
  std::vector<WhatIf> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    if (!item.empty()) out.push_back(parse_one(item));
    start = comma + 1;
  }
  return out;
}

ClusterNetwork cluster_for(const ClusterNetwork& cluster, const Workload& w) {
  if (cluster.gpus_per_node != w.gpus_per_node) {
    throw UsageError(
        fmt::format("the cluster has {} GPUs per node but workload '{}' is laid out for {}",
                    cluster.gpus_per_node, w.name, w.gpus_per_node));
  }
  ClusterNetwork c = cluster;
  c.nodes = w.nodes();
  return c;
}

WhatIfResult evaluate(const WhatIf& what, const Workload& w, const ClusterNetwork& cluster,
                      const NetworkFactory& factory) {
  WhatIfResult r;
  r.label = what.label;
  r.workload = w;
  const ClusterNetwork base = cluster_for(cluster, w);
  ClusterNetwork changed = base;
  switch (what.kind) {
    case WhatIf::Kind::kInterBw:
      scale_bw(changed, true, what.factor);
      break;
    case WhatIf::Kind::kInterLatency:
      changed.inter.latency_s *= what.factor;
      if (changed.alltoall_inter) changed.alltoall_inter->latency_s *= what.factor;
      break;
    case WhatIf::Kind::kIntraBw:
      scale_bw(changed, false, what.factor);
      break;
    case WhatIf::Kind::kIntraLatency:
      changed.intra.latency_s *= what.factor;
      if (changed.alltoall_intra) changed.alltoall_intra->latency_s *= what.factor;
      break;
    case WhatIf::Kind::kNodes: {
      const long gpus = static_cast<long>(what.nodes) * w.gpus_per_node;
      const long model_parallel = static_cast<long>(w.tp) * w.pp;
      if (gpus % model_parallel != 0) {
        throw UsageError(fmt::format("--what-if '{}': {} GPUs are not a multiple of tp x pp = {}",
                                     what.label, gpus, model_parallel));
      }
      r.workload.dp = static_cast<int>(gpus / model_parallel);
      break;
    }
    case WhatIf::Kind::kLayout:
      r.workload.tp = what.tp;
      r.workload.pp = what.pp;
      r.workload.dp = what.dp;
      if (what.vp > 0) r.workload.vp = what.vp;
      break;
  }
  if (what.kind == WhatIf::Kind::kNodes || what.kind == WhatIf::Kind::kLayout) {
    validate(r.workload, fmt::format("--what-if '{}'", what.label));
    changed = cluster_for(changed, r.workload);
  }
  r.baseline = model_step(w, *factory(base));
  r.changed = model_step(r.workload, *factory(changed));
  r.change_pct = 100 * (r.changed.step_s - r.baseline.step_s) / r.baseline.step_s;
  return r;
}

Sensitivity inter_bw_sensitivity(const Workload& w, const ClusterNetwork& cluster,
                                 const NetworkFactory& factory, double rel_step) {
  const ClusterNetwork base = cluster_for(cluster, w);
  Sensitivity s;
  s.inter_bw_gbps = base.inter.bw_gbps;
  s.step_s = step_s(w, base, factory);
  ClusterNetwork up = base;
  ClusterNetwork down = base;
  scale_bw(up, true, 1 + rel_step);
  scale_bw(down, true, 1 - rel_step);
  const double delta_bw = up.inter.bw_gbps - down.inter.bw_gbps;
  s.ds_dbw_s_per_gbps = (step_s(w, up, factory) - step_s(w, down, factory)) / delta_bw;
  s.elasticity = s.ds_dbw_s_per_gbps * s.inter_bw_gbps / s.step_s;
  return s;
}

}  // namespace ibscope::model
