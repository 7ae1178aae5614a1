#include "ibscope/accept/history.hpp"

#include <fmt/format.h>

namespace ibscope::accept {
namespace {

std::string rate(double gbps) {
  return gbps >= 1 ? fmt::format("{:.2f} GB/s", gbps) : fmt::format("{:.2f} MB/s", gbps * 1e3);
}

// Below the threshold and outside the noise band of the past runs.
bool dropped(double measured, const measure::RobustStats& past, const HistoryThresholds& t) {
  if (past.n == 0 || past.median <= 0) return false;
  return measured < past.median * (1 - t.drop_pct / 100) &&
         measured < past.median - t.noise_k * past.spread;
}

}  // namespace

const LinkHistory* History::find_link(const std::string& host_a, const std::string& nic_a,
                                      const std::string& host_b,
                                      const std::string& nic_b) const noexcept {
  for (const auto& l : links) {
    if ((l.host_a == host_a && l.nic_a == nic_a && l.host_b == host_b && l.nic_b == nic_b) ||
        (l.host_a == host_b && l.nic_a == nic_b && l.host_b == host_a && l.nic_b == nic_a)) {
      return &l;
    }
  }
  return nullptr;
}

const RowHistory* History::find_row(const std::string& collective, const std::string& algorithm,
                                    const std::string& type, std::uint64_t size_bytes,
                                    int ranks) const noexcept {
  for (const auto& r : rows) {
    if (r.collective == collective && r.algorithm == algorithm && r.type == type &&
        r.size_bytes == size_bytes && r.ranks == ranks) {
      return &r;
    }
  }
  return nullptr;
}

HistoryFinding judge_history(const LinkHistory* past, double measured_gbps,
                             const std::optional<ClassReference>& reference,
                             const HistoryThresholds& t) {
  HistoryFinding f;
  if (past != nullptr && past->bw_gbps.n > 0 && past->bw_gbps.median > 0) {
    const measure::RobustStats& s = past->bw_gbps;
    f.known = true;
    f.median_gbps = s.median;
    f.spread_gbps = s.spread;
    f.runs = s.n;
    f.drop_pct = 100 * (s.median - measured_gbps) / s.median;
    f.below = dropped(measured_gbps, s, t);
    if (f.below) {
      f.reason = fmt::format(
          "{} is {:.0f} % below its baseline (median of {} runs {}, spread ±{:.1f} %; fails "
          "beyond {:g} % and {:g} x the spread)",
          rate(measured_gbps), f.drop_pct, s.n, rate(s.median), s.spread_pct(), t.drop_pct,
          t.noise_k);
    }
  }
  if (reference && reference->link_bw_gbps > 0) {
    f.reference_name = reference->name;
    f.reference_gbps = reference->link_bw_gbps;
    f.reference_drop_pct =
        100 * (reference->link_bw_gbps - measured_gbps) / reference->link_bw_gbps;
    f.below_reference = f.reference_drop_pct > t.drop_pct;
    if (f.below_reference) {
      f.reference_reason = fmt::format("{} is {:.0f} % below the reference for {} ({}: {})",
                                       rate(measured_gbps), f.reference_drop_pct, reference->name,
                                       rate(reference->link_bw_gbps), reference->source);
    }
  }
  return f;
}

std::vector<std::string> row_history_warnings(const std::vector<RowFigure>& rows,
                                              const History& history, const HistoryThresholds& t) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    const RowHistory* past =
        history.find_row(r.collective, r.algorithm, r.type, r.size_bytes, r.ranks);
    if (past == nullptr || !dropped(r.busbw_gbps, past->busbw_gbps, t)) continue;
    const measure::RobustStats& s = past->busbw_gbps;
    out.push_back(fmt::format(
        "baseline: {} {} {} {} B on {} ranks: busbw {} is {:.0f} % below its baseline (median of "
        "{} runs {}, spread ±{:.1f} %)",
        r.collective, r.algorithm, r.type, r.size_bytes, r.ranks, rate(r.busbw_gbps),
        100 * (s.median - r.busbw_gbps) / s.median, s.n, rate(s.median), s.spread_pct()));
  }
  return out;
}

}  // namespace ibscope::accept
