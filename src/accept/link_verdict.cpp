#include "ibscope/accept/link_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace ibscope::accept {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double mad_of(const std::vector<double>& values, double median) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::abs(v - median));
  return median_of(std::move(deviations));
}

double outlier_below_gbps(double median_gbps, double mad_gbps, const Thresholds& t) {
  // 1.4826 x MAD estimates the standard deviation of normal noise.
  const double spread = std::max(1.4826 * mad_gbps, t.mad_floor_fraction * median_gbps);
  return median_gbps - t.mad_k * spread;
}

FabricReference reference_of(const AcceptReport& report) noexcept {
  return {report.median_gbps, report.mad_gbps, report.median_latency_us};
}

AcceptReport judge_links(const std::vector<LinkMeasurement>& links, const Thresholds& t,
                         const FabricReference* reference) {
  AcceptReport report;
  std::vector<double> measured;
  for (const auto& l : links) measured.push_back(l.measured_gbps);
  report.median_gbps = reference ? reference->median_gbps : median_of(measured);
  report.mad_gbps = reference ? reference->mad_gbps : mad_of(measured, report.median_gbps);
  const double spread =
      std::max(1.4826 * report.mad_gbps, t.mad_floor_fraction * report.median_gbps);
  const double outlier_below = outlier_below_gbps(report.median_gbps, report.mad_gbps, t);
  std::vector<double> latencies;
  for (const auto& l : links) {
    if (l.latency_us > 0) latencies.push_back(l.latency_us);
  }
  report.median_latency_us = reference ? reference->median_latency_us : median_of(latencies);

  for (const auto& l : links) {
    LinkVerdict v;
    v.link = l;
    v.peers_median_gbps = report.median_gbps;
    if (l.expected_gbps > 0) {
      v.fraction_of_expected = l.measured_gbps / l.expected_gbps;
      v.below_expected = v.fraction_of_expected < t.min_fraction;
    }
    v.outlier = links.size() >= 3 && l.measured_gbps < outlier_below;
    v.slow_latency = t.max_latency_ratio > 0 && latencies.size() >= 3 && l.latency_us > 0 &&
                     l.latency_us > t.max_latency_ratio * report.median_latency_us;
    const bool counters_fail = l.counters && (l.counters->errors || l.counters->flapped);
    const bool history_fail = l.history && l.history->below;
    v.pass = !v.below_expected && !v.outlier && !v.slow_latency && !counters_fail && !history_fail;
    if (v.below_expected) {
      v.reason = fmt::format(
          "{:.3f} GB/s is {:.0f} % of the expected {:.3f} GB/s (threshold {:.0f} %)",
          l.measured_gbps, 100 * v.fraction_of_expected, l.expected_gbps, 100 * t.min_fraction);
    }
    if (v.outlier) {
      v.reason += fmt::format(
          "{}{:.3f} GB/s is below the links' median {:.3f} GB/s by more than "
          "{:g} x {:.3f} GB/s",
          v.reason.empty() ? "" : "; ", l.measured_gbps, report.median_gbps, t.mad_k, spread);
    }
    if (v.slow_latency) {
      v.reason += fmt::format("{}latency {:.1f} us is over {:g} x the links' median {:.1f} us",
                              v.reason.empty() ? "" : "; ", l.latency_us, t.max_latency_ratio,
                              report.median_latency_us);
    }
    if (history_fail) {
      v.reason += fmt::format("{}baseline: {}", v.reason.empty() ? "" : "; ", l.history->reason);
    }
    if (l.counters && !v.pass) {
      // Why: the counters' evidence beside the figures (or that none moved).
      v.reason +=
          fmt::format("{}counters: {}", v.reason.empty() ? "" : "; ", l.counters->summary());
    }
    report.links.push_back(std::move(v));
  }

  std::map<std::string, HostVerdict> hosts;
  for (const auto& v : report.links) {
    for (const std::string* h : {&v.link.host_a, &v.link.host_b}) {
      auto& host = hosts[*h];
      host.host = *h;
      ++host.links;
      if (!v.pass) ++host.failed_links;
      if (v.link.host_a == v.link.host_b) break;  // a link inside one host counts once
    }
  }
  for (auto& [name, host] : hosts) {
    host.culprit = host.links >= 2 && host.failed_links == host.links;
  }
  for (auto& [name, host] : hosts) {
    if (host.culprit) {
      host.pass = false;
      // Slow, unless every link failed on its counters alone (then it is erroring or flapping).
      bool only_counters = true;
      for (const auto& v : report.links) {
        if (v.link.host_a != name && v.link.host_b != name) continue;
        only_counters = only_counters && !v.below_expected && !v.outlier && !v.slow_latency &&
                        !(v.link.history && v.link.history->below);
      }
      host.reason = only_counters
                        ? fmt::format(
                              "all {} of its links failed on their NIC counters: "
                              "this host's NIC or cable is erroring",
                              host.links)
                        : fmt::format("all {} of its links failed: this host is slow", host.links);
      continue;
    }
    // Failures on links to a culprit are the culprit's, not this host's.
    int unexplained = 0;
    for (const auto& v : report.links) {
      if (v.pass || (v.link.host_a != name && v.link.host_b != name)) continue;
      const std::string& other = v.link.host_a == name ? v.link.host_b : v.link.host_a;
      if (other != name && hosts.at(other).culprit) continue;
      ++unexplained;
    }
    if (unexplained > 0) {
      host.pass = false;
      host.reason = fmt::format("{} of its {} links failed", unexplained, host.links);
    }
  }
  for (auto& [name, host] : hosts) report.hosts.push_back(std::move(host));
  report.pass = std::all_of(report.links.begin(), report.links.end(),
                            [](const LinkVerdict& v) { return v.pass; });
  return report;
}

std::vector<std::pair<int, int>> suspects(const AcceptReport& report) {
  std::vector<std::pair<int, int>> out;
  for (const auto& v : report.links) {
    if (!v.pass) out.emplace_back(v.link.rank_a, v.link.rank_b);
  }
  return out;
}

void merge_retest(std::vector<LinkMeasurement>& links, const std::vector<LinkMeasurement>& retest) {
  for (const auto& r : retest) {
    for (auto& l : links) {
      const bool same = (l.rank_a == r.rank_a && l.rank_b == r.rank_b) ||
                        (l.rank_a == r.rank_b && l.rank_b == r.rank_a);
      if (!same) continue;
      l.measured_gbps = std::max(l.measured_gbps, r.measured_gbps);
      if (r.latency_us > 0) {
        l.latency_us = l.latency_us > 0 ? std::min(l.latency_us, r.latency_us) : r.latency_us;
      }
      ++l.attempts;
    }
  }
}

}  // namespace ibscope::accept
