#include "ibscope/accept/pattern_verdict.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

namespace ibscope::accept {
namespace {

// "h0->h3 0.0020, h1->h3 0.0019 GB/s"
std::string pattern_flows_text(const results::AcceptPattern& p) {
  std::string out;
  for (const auto& f : p.flows) {
    out +=
        fmt::format("{}{}->{} {:.4f}", out.empty() ? "" : ", ", f.host_src, f.host_dst, f.bw_gbps);
  }
  return out + " GB/s";
}

std::string pattern_round_name(const results::AcceptPattern& p) {
  if (p.pattern.starts_with("incast")) return fmt::format("{} onto {}", p.pattern, p.hub_host);
  if (p.pattern.starts_with("one-to-many")) return fmt::format("{} from {}", p.pattern, p.hub_host);
  return p.pattern;
}

}  // namespace

std::vector<results::AcceptPattern> judge_pattern_rows(const std::vector<measure::P2pRow>& rows,
                                                       double link_gbps, const PatternThresholds& t,
                                                       const CounterThresholds& ct) {
  std::vector<results::AcceptPattern> out;
  std::map<std::pair<int, std::uint64_t>, std::size_t> index;  // (round, size) -> out
  std::vector<std::vector<fabric::NicDelta>> nics;
  std::vector<std::set<std::pair<std::string, std::string>>> seen;
  for (const measure::P2pRow& r : rows) {
    if (!r.pattern) continue;
    const auto key = std::pair{r.pattern->round, r.size_bytes};
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, out.size()).first;
      results::AcceptPattern p;
      p.pattern = r.pattern->pattern;
      p.round = r.pattern->round;
      p.hub_host = r.pattern->hub_host;
      p.size_bytes = r.size_bytes;
      p.aggregate_gbps = r.pattern->aggregate_bw_gbps;
      p.fairness_jain = r.pattern->fairness_jain;
      out.push_back(std::move(p));
      nics.emplace_back();
      seen.emplace_back();
    }
    results::AcceptPattern& p = out[it->second];
    p.flows.push_back({r.host_a, r.host_b, r.bw_gbps});
    for (const fabric::NicDelta& d : r.nic_counters) {
      if (seen[it->second].insert({d.host, d.nic}).second) nics[it->second].push_back(d);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    results::AcceptPattern& p = out[i];
    const bool bisection = p.hub_host.empty();
    p.expected_gbps = link_gbps * (bisection ? static_cast<double>(p.flows.size()) : 1.0);
    std::vector<std::string> why;
    if (p.expected_gbps > 0 && p.aggregate_gbps < t.min_fraction * p.expected_gbps) {
      why.push_back(fmt::format(
          "aggregate {:.4f} GB/s is {:.2f} of the expected {:.4f} GB/s "
          "(min {:.2f})",
          p.aggregate_gbps, p.aggregate_gbps / p.expected_gbps, p.expected_gbps, t.min_fraction));
    }
    if (p.flows.size() >= 2 && p.fairness_jain < t.min_fairness) {
      why.push_back(fmt::format("fairness (Jain's index) {:.3f} below {:.2f}", p.fairness_jain,
                                t.min_fairness));
    }
    if (!why.empty()) {
      p.pass = false;
      std::string reasons;
      for (const auto& w : why) reasons += (reasons.empty() ? "" : "; ") + w;
      p.reason = fmt::format("{}, {} B: {}; flows {}", pattern_round_name(p), p.size_bytes, reasons,
                             pattern_flows_text(p));
    }
    const CounterFindings f = judge_counters(nics[i], ct);
    p.congestion_pct = f.congestion_pct;
    if (f.congested) {
      p.congestion =
          fmt::format("{}, {} B: {}", pattern_round_name(p), p.size_bytes, f.congestion_text);
    }
  }
  return out;
}

}  // namespace ibscope::accept
