#include "ibscope/model/results_fits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/hosts.hpp"
#include "ibscope/measure/stats.hpp"

namespace ibscope::model {
namespace {

// Measured times per size of one curve; several rows at one size (a repeated run in the same
// file) are combined by their median.
using TimesBySize = std::map<double, std::vector<double>>;

struct SizeSeries {
  std::vector<double> bytes, time_s;
};

SizeSeries per_size_median(const TimesBySize& by_size) {
  SizeSeries s;
  for (auto [bytes, times] : by_size) {
    std::sort(times.begin(), times.end());
    s.bytes.push_back(bytes);
    s.time_s.push_back(measure::percentile_sorted(times, 50));
  }
  return s;
}

// The algorithm's cost formula as coefficients of alpha, beta and gamma: cost_s is linear in
// them, so evaluating it with one unit cost at a time gives each coefficient.
std::optional<CostCoefficients> cost_coefficients(const CurveKey& key, std::string& note) {
  const auto c = collective_named(key.collective);
  if (!c) {
    note = fmt::format("no cost formula: collective '{}' unknown to this build", key.collective);
    return std::nullopt;
  }
  if (key.ranks < 2) {
    note = "no per-link parameters: one rank crosses no link";
    return std::nullopt;
  }
  const collectives::CollectiveAlgorithmInfo* info = nullptr;
  for (const auto& a : collectives::algorithms_for(*c)) {
    if (a.name == key.algorithm) info = &a;
  }
  if (info != nullptr && info->caps.two_tier_cost_s && key.ranks > key.hosts) {
    // Its local steps run in shared memory and its rings on the network: two tiers, which one
    // per-link fit cannot separate (docs/model.md, "Tiers").
    note = fmt::format(
        "no per-link parameters: {} with several ranks per host spans two tiers (shared "
        "memory, network)",
        key.algorithm);
    return std::nullopt;
  }
  if (info == nullptr) {
    note = fmt::format("no cost formula: algorithm '{}' unknown to this build", key.algorithm);
    return std::nullopt;
  }
  const auto cost = info->cost_s;
  const int p = key.ranks;
  CostCoefficients k;
  k.alpha_count = [cost, p](double n) { return cost(collectives::LinkCost{1, 0, 0}, n, p); };
  k.wire_bytes = [cost, p](double n) { return cost(collectives::LinkCost{0, 1, 0}, n, p); };
  k.reduced_bytes = [cost, p](double n) { return cost(collectives::LinkCost{0, 0, 1}, n, p); };
  note =
      reduces(*c) ? "link bandwidth is effective: the reduction (gamma) is folded into beta" : "";
  return k;
}

int distinct_hosts(const results::Document& results) { return count_hosts(results.job.hosts); }

bool counts_wrong(const measure::CollectiveRow& row) { return row.wrong && *row.wrong > 0; }

struct CurveGroup {
  CurveKey key;
  TimesBySize times;
  int dropped_rows = 0;
};

// GPU buffers make a different curve: "tcp" becomes "tcp/cuda-staged" (rows without the fields
// are host memory, as every row before GPU buffers).
std::string with_memory(const std::string& transport, std::string_view mem, std::string_view path) {
  if (mem == "host" && path == "host") return transport;
  return fmt::format("{}/{}-{}", transport, mem, path);
}

void fit_collectives(const results::Document& results, const std::string& source,
                     const FitFilter& filter, FitReport& report, const CurveFitOptions& options) {
  const std::string transport = file_transport_label(results);
  const int hosts = distinct_hosts(results);
  std::map<std::string, CurveGroup> groups;  // by id: a stable, readable order
  for (const measure::CollectiveRow& row : results.collectives.rows) {
    // Nothing moved (--sizes 0; an all-to-all size below one element per rank): no point of a
    // time-against-size curve.
    if (row.size_bytes == 0) continue;
    CurveKey k;
    k.collective = name_of(row.collective);
    k.algorithm = row.algorithm;
    if (filter.collective && k.collective != *filter.collective) continue;
    if (filter.algorithm && k.algorithm != *filter.algorithm) continue;
    k.transport = with_memory(transport, memory::name_of(row.mem), memory::name_of(row.mem_path));
    k.ranks = row.ranks;
    k.hosts = hosts;
    k.in_place = row.in_place;
    k.type = name_of(row.type);
    k.op = measure::name_of(row.op);
    k.root = row.root;
    auto& g = groups[k.id()];
    g.key = k;
    const double p50_us = row.iteration_us.p50;
    if (counts_wrong(row) || !(p50_us > 0)) {
      ++g.dropped_rows;
      continue;
    }
    g.times[static_cast<double>(row.size_bytes)].push_back(p50_us * 1e-6);
  }
  for (auto& [id, g] : groups) {
    const SizeSeries s = per_size_median(g.times);
    const auto need = static_cast<std::size_t>(std::max(2, options.min_points));
    if (s.bytes.size() < need) {
      report.notes.push_back(fmt::format(
          "{}: {}: skipped, {} usable size(s){}, a fit needs {}", source, id, s.bytes.size(),
          g.dropped_rows > 0
              ? fmt::format(" ({} row(s) left out: #wrong > 0 or median <= 0)", g.dropped_rows)
              : "",
          need));
      continue;
    }
    CurveResult r;
    r.source = source;
    r.key = g.key;
    r.dropped_rows = g.dropped_rows;
    const auto cost = cost_coefficients(g.key, r.link_note);
    r.fit = fit_curve(s.bytes, s.time_s, options, cost);
    report.curves.push_back(std::move(r));
  }
}

struct LinkGroup {
  LinkResult link;  // everything but the fit
  TimesBySize times;
};

void fit_link_groups(std::map<std::string, LinkGroup>& groups, const std::string& source,
                     FitReport& report, const CurveFitOptions& options) {
  for (auto& [id, g] : groups) {
    const SizeSeries s = per_size_median(g.times);
    const auto need = static_cast<std::size_t>(std::max(2, options.min_points));
    if (s.bytes.size() < need) {
      report.notes.push_back(fmt::format("{}: {}: skipped, {} usable size(s), a fit needs {}",
                                         source, id, s.bytes.size(), need));
      continue;
    }
    LinkResult l = std::move(g.link);
    l.fit = fit_curve(s.bytes, s.time_s, options);
    l.alpha_us = l.fit.segments.front().alpha_s * 1e6;
    l.bw_gbps = l.fit.segments.back().bw_gbps;
    report.links.push_back(std::move(l));
  }
}

void fit_p2p(const results::Document& results, const std::string& source, FitReport& report,
             const CurveFitOptions& options) {
  std::map<std::string, LinkGroup> groups;
  for (const measure::P2pRow& row : results.p2p.rows) {
    LinkResult l;
    l.source = source;
    l.kind = "p2p";
    l.test = row.test;
    l.rank_a = row.rank_a;
    l.rank_b = row.rank_b;
    l.host_a = row.host_a;
    l.host_b = row.host_b;
    l.transport = with_memory(transport_label(row.transports), row.mem, row.mem_path);
    // Latency rows time one message (half a round trip); bandwidth rows time a window of
    // `window` messages (bibw: in both directions), so their x is the bytes of a window.
    const auto size = static_cast<double>(row.size_bytes);
    const double window = std::max(1.0, static_cast<double>(row.window));
    double bytes = size;
    if (l.test == "latency") {
      l.fitted = "half round trip vs message bytes";
    } else {
      bytes = size * window * (l.test == "bibw" ? 2.0 : 1.0);
      l.fitted = "window time vs window bytes";
    }
    const double p50_us = row.time_us.p50;
    auto& g = groups[l.id()];
    if (g.link.kind.empty()) g.link = l;
    if (p50_us > 0) g.times[bytes].push_back(p50_us * 1e-6);
  }
  fit_link_groups(groups, source, report, options);
}

void fit_probes(const results::Document& results, const std::string& source, FitReport& report,
                const CurveFitOptions& options) {
  if (!results.probes) return;
  std::map<std::string, LinkGroup> groups;
  for (const measure::ProbeRow& row : results.probes->rows) {
    LinkResult l;
    l.source = source;
    l.kind = "verbs";
    l.test = row.test;
    l.rank_a = row.rank_a;
    l.rank_b = row.rank_b;
    l.host_a = row.host_a;
    l.host_b = row.host_b;
    l.transport = fmt::format("{}->{}", row.device_a, row.device_b);
    const auto size = static_cast<double>(row.size_bytes);
    const bool bidirectional = row.bidirectional;
    double bytes = size, time_s = 0;
    if (l.test.ends_with("_lat")) {
      l.fitted =
          l.test == "read_lat" ? "read time vs message bytes" : "half round trip vs message bytes";
      time_s = row.time_us.p50 * 1e-6;
    } else {
      // Bandwidth tests stream messages: time per message = bytes / average rate (both
      // directions' bytes when bidirectional, so x counts both).
      if (bidirectional) bytes = 2 * size;
      l.fitted = "time per message vs message bytes (from bw_gbps)";
      const double gbps = row.bw_gbps;
      time_s = gbps > 0 ? bytes / (gbps * 1e9) : 0;
    }
    if (bidirectional) l.test += "_bidir";
    auto& g = groups[l.id()];
    if (g.link.kind.empty()) g.link = l;
    if (time_s > 0) g.times[bytes].push_back(time_s);
  }
  fit_link_groups(groups, source, report, options);
}

}  // namespace

std::string CurveKey::id() const {
  std::string id = fmt::format("{}/{}/{}/p{}/h{}/{}/{}/{}", collective, algorithm, transport, ranks,
                               hosts, in_place ? "in" : "out", type, op);
  if (root >= 0) id += fmt::format("/root{}", root);
  return id;
}

std::string LinkResult::id() const {
  return fmt::format("{}/{}/{}-{}", kind, test, rank_a, rank_b);
}

std::string transport_label(std::string_view lanes) {
  const std::string_view head = lanes.substr(0, lanes.find('|'));
  std::istringstream tokens{std::string(head)};
  std::vector<std::string> names;
  for (std::string token; tokens >> token;) {
    std::string name = token.substr(0, token.find_first_of("/["));
    if (!name.empty() && std::ranges::find(names, name) == names.end()) {
      names.push_back(std::move(name));
    }
  }
  if (names.empty()) return "unknown";
  return fmt::format("{}", fmt::join(names, "+"));
}

std::string file_transport_label(const results::Document& results) {
  // nccl-tests output (docs/nccl-tests.md) does not say which transports NCCL used.
  if (results.tool.name == "nccl-tests") return "nccl";
  std::vector<std::string> labels;
  if (results.environment.transports) {
    for (const auto& [pair, lanes] : *results.environment.transports) {
      std::string label = transport_label(lanes);
      if (std::ranges::find(labels, label) == labels.end()) labels.push_back(std::move(label));
    }
  }
  if (results.environment.transport_classes) {  // a large job's pairs, grouped (issue 23)
    for (const auto& c : *results.environment.transport_classes) {
      std::string label = transport_label(c.lanes);
      if (std::ranges::find(labels, label) == labels.end()) labels.push_back(std::move(label));
    }
  }
  if (labels.empty()) return "unknown";
  return fmt::format("{}", fmt::join(labels, ","));
}

void fit_results(const results::Document& results, const std::string& source,
                 const FitFilter& filter, FitReport& report, const CurveFitOptions& options) {
  report.sources.push_back(source);
  fit_collectives(results, source, filter, report, options);
  fit_p2p(results, source, report, options);
  fit_probes(results, source, report, options);
}

}  // namespace ibscope::model
