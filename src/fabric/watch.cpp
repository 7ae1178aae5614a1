#include "ibscope/fabric/watch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ibscope::fabric {

NicRates nic_rates(const NicDelta& delta) {
  NicRates r;
  r.nic = delta.nic;
  r.driver = delta.driver;
  r.interval_s = delta.interval_s;
  r.traffic_bytes = delta.traffic_bytes();
  r.bytes_per_s =
      delta.interval_s > 0 ? static_cast<double>(r.traffic_bytes) / delta.interval_s : 0.0;
  r.errors = delta.sum(CounterKind::kErrors);
  r.congestion = delta.sum(CounterKind::kCongestion);
  r.flaps = delta.sum(CounterKind::kFlaps);
  r.appeared = delta.appeared;
  r.vanished = delta.vanished;
  return r;
}

bool is_listed_rail(const std::string& nic, const std::vector<std::string>& rails) {
  for (const std::string& r : rails) {
    if (nic == r || (nic.size() > r.size() + 1 && nic.starts_with(r) && nic[r.size()] == ':')) {
      return true;
    }
  }
  return false;
}

std::string_view name_of(WatchFindingKind kind) noexcept {
  switch (kind) {
    case WatchFindingKind::kErrors:
      return "errors";
    case WatchFindingKind::kFlap:
      return "flap";
    case WatchFindingKind::kCongestion:
      return "congestion";
    case WatchFindingKind::kRailImbalance:
      return "rail_imbalance";
  }
  return "errors";
}

std::vector<WatchFinding> interval_findings(const std::vector<NicDelta>& deltas) {
  std::vector<WatchFinding> out;
  for (const NicDelta& d : deltas) {
    // A saturating error counter at its maximum (the IB PMA's 16-bit symbol_error, ...) hides
    // any further growth: a finding for as long as nobody clears it.
    std::string saturated;
    for (const CounterDelta& c : d.counters) {
      if (c.kind == CounterKind::kErrors && c.saturated && c.delta == 0) {
        saturated += fmt::format("{}{} at its maximum (saturated: growth unknown)",
                                 saturated.empty() ? "" : ", ", c.name);
      }
    }
    if (d.sum(CounterKind::kErrors) > 0 || !saturated.empty()) {
      std::string grown = d.describe(CounterKind::kErrors);
      out.push_back(
          {WatchFindingKind::kErrors, d.nic,
           grown.empty() || saturated.empty() ? grown + saturated : grown + ", " + saturated});
    }
    if (d.appeared || d.vanished) {
      out.push_back({WatchFindingKind::kFlap, d.nic,
                     d.appeared ? "appeared (absent from the previous reading)"
                                : "vanished (absent from this reading)"});
    } else if (d.sum(CounterKind::kFlaps) > 0) {
      out.push_back({WatchFindingKind::kFlap, d.nic, d.describe(CounterKind::kFlaps)});
    }
    if (d.sum(CounterKind::kCongestion) > 0) {
      out.push_back({WatchFindingKind::kCongestion, d.nic, d.describe(CounterKind::kCongestion)});
    }
  }
  return out;
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<WatchFinding> rail_imbalance(const std::vector<RailTraffic>& nics,
                                         const WatchThresholds& t, double window_s) {
  std::vector<WatchFinding> out;
  if (t.imbalance_fraction <= 0) return out;
  std::map<std::string, std::vector<const RailTraffic*>> by_driver;
  for (const RailTraffic& n : nics) {
    if (n.compared && n.driver != "tcp") by_driver[n.driver].push_back(&n);
  }
  for (const auto& [driver, group] : by_driver) {
    if (group.size() < 2) continue;  // one NIC: nothing to compare it with
    std::vector<double> rates;
    for (const RailTraffic* n : group) rates.push_back(n->bytes_per_s);
    const double median = median_of(rates);
    if (median < t.imbalance_min_bytes_per_s) continue;  // idle (between jobs, a pause)
    for (const RailTraffic* n : group) {
      if (n->bytes_per_s >= t.imbalance_fraction * median) continue;
      out.push_back({WatchFindingKind::kRailImbalance, n->nic,
                     fmt::format("moved {:.3f} MB/s over the last {:.0f} s, {:.1f} % of the "
                                 "median {} NIC of this node ({:.3f} MB/s; threshold {:.0f} %)",
                                 n->bytes_per_s / 1e6, window_s, 100 * n->bytes_per_s / median,
                                 driver, median / 1e6, 100 * t.imbalance_fraction)});
    }
  }
  // In the NICs' order, whatever the driver grouping.
  std::vector<WatchFinding> ordered;
  for (const RailTraffic& n : nics) {
    for (const WatchFinding& f : out) {
      if (f.nic == n.nic) ordered.push_back(f);
    }
  }
  return ordered;
}

}  // namespace ibscope::fabric
