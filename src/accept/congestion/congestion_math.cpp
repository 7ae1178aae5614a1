#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ibscope/accept/congestion.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/measure/stats.hpp"

namespace ibscope::accept {

std::string_view name_of(CongestorPattern p) noexcept {
  switch (p) {
    case CongestorPattern::kIncast:
      return "incast";
    case CongestorPattern::kAlltoall:
      return "alltoall";
    case CongestorPattern::kBroadcast:
      return "broadcast";
  }
  return "?";
}

std::vector<CongestorPattern> parse_congestors(std::string_view text) {
  const std::vector<CongestorPattern> every{CongestorPattern::kIncast, CongestorPattern::kAlltoall,
                                            CongestorPattern::kBroadcast};
  if (text == "all") return every;
  std::vector<CongestorPattern> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const auto it = std::find_if(every.begin(), every.end(),
                                 [&](CongestorPattern p) { return name_of(p) == item; });
    if (it == every.end()) {
      throw UsageError(fmt::format(
          "--congestors '{}': '{}' is not a congestor; expected all or a comma list of incast, "
          "alltoall, broadcast",
          text, item));
    }
    if (std::find(out.begin(), out.end(), *it) != out.end()) {
      throw UsageError(fmt::format("--congestors '{}': '{}' is listed twice", text, item));
    }
    out.push_back(*it);
    start = comma + 1;
  }
  return out;
}

void validate(const CongestionOptions& o) {
  if (!(o.victim_fraction > 0 && o.victim_fraction < 1)) {
    throw UsageError(fmt::format("--victim-fraction {}: must be in (0, 1)", o.victim_fraction));
  }
  if (!(o.max_impact >= 1)) {
    throw UsageError(
        fmt::format("--max-congestion-impact {}: must be >= 1 (1: no slowdown "
                    "allowed)",
                    o.max_impact));
  }
  if (!(o.max_tail_impact >= 1)) {
    throw UsageError(
        fmt::format("--max-congestion-tail-impact {}: must be >= 1", o.max_tail_impact));
  }
  if (o.congestors.empty()) throw UsageError("--congestors: give at least one congestor");
  if (o.allreduce_bytes < 4) {
    throw UsageError(
        fmt::format("--congestion-ar-size {}: must be >= 4 (one float)", o.allreduce_bytes));
  }
  if (o.congestor_bytes < 1) throw UsageError("--congestor-size: must be >= 1");
}

double impact_factor(double isolated, double congested, bool higher_is_better) noexcept {
  if (!(isolated > 0) || !(congested > 0)) return std::numeric_limits<double>::quiet_NaN();
  return higher_is_better ? isolated / congested : congested / isolated;
}

VictimFigures victim_figures(std::span<const double> half_rtt_us,
                             const std::vector<std::vector<double>>& iteration_us,
                             std::uint64_t allreduce_bytes) {
  VictimFigures f;
  const measure::Stats lat = measure::summarize(half_rtt_us);
  f.latency_p50_us = lat.p50;
  f.latency_p99_us = lat.p99;
  f.latency_samples = lat.n;
  std::size_t iters = iteration_us.empty() ? 0 : iteration_us.front().size();
  for (const auto& v : iteration_us) iters = std::min(iters, v.size());
  std::vector<double> slowest(iters, 0.0);
  for (const auto& v : iteration_us) {
    for (std::size_t i = 0; i < iters; ++i) slowest[i] = std::max(slowest[i], v[i]);
  }
  f.allreduce_iterations = iters;
  const int p = static_cast<int>(iteration_us.size());
  if (iters == 0 || p < 2) return f;
  const measure::Stats t = measure::summarize(slowest);
  const double factor = 2.0 * (p - 1) / p;
  const auto busbw = [&](double us) {
    return us > 0 ? static_cast<double>(allreduce_bytes) / (us * 1e-6) * factor / 1e9 : 0.0;
  };
  f.busbw_gbps = busbw(t.mean);
  f.tail_busbw_gbps = busbw(t.p99);
  return f;
}

std::vector<ImpactRow> judge_impact(std::string_view congestor, const VictimFigures& isolated,
                                    const VictimFigures& congested, const CongestionOptions& o) {
  struct Metric {
    const char* name;
    double VictimFigures::*field;
    bool higher_is_better, tail;
  };
  static constexpr Metric kMetrics[] = {
      {"latency_p50_us", &VictimFigures::latency_p50_us, false, false},
      {"latency_p99_us", &VictimFigures::latency_p99_us, false, true},
      {"busbw_gbps", &VictimFigures::busbw_gbps, true, false},
      {"tail_busbw_gbps", &VictimFigures::tail_busbw_gbps, true, true},
  };
  std::vector<ImpactRow> rows;
  for (const Metric& m : kMetrics) {
    ImpactRow r;
    r.congestor = std::string(congestor);
    r.metric = m.name;
    r.isolated = isolated.*m.field;
    r.congested = congested.*m.field;
    r.impact = impact_factor(r.isolated, r.congested, m.higher_is_better);
    r.tail = m.tail;
    r.max_impact = m.tail ? o.max_tail_impact : o.max_impact;
    r.pass = r.impact <= r.max_impact;  // NaN: false
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace ibscope::accept
