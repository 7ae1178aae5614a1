#include "ibscope/fabric/watch_state.hpp"

#include <algorithm>

namespace ibscope::fabric {
namespace {

// An RDMA port is always a rail; a plain interface (driver "netdev") only once it has carried
// traffic, and the namespace's TCP never.
bool is_rdma_port(const std::string& driver) { return driver != "netdev" && driver != "tcp"; }

}  // namespace

WatchState::WatchState(WatchThresholds thresholds, const CounterSnapshot& first)
    : thresholds_(thresholds), last_(first), start_s_(first.time_s) {
  for (const NicSample& n : first.nics) totals_of(n.nic, n.driver);
  count_counters(first);
}

NicTotals& WatchState::totals_of(const std::string& nic, const std::string& driver) {
  for (NicTotals& t : totals_) {
    if (t.nic == nic) return t;
  }
  NicTotals t;
  t.nic = nic;
  t.driver = driver;
  totals_.push_back(std::move(t));
  return totals_.back();
}

// Every counter the reading has gets a series (at 0 until it grows): a Prometheus counter that
// appears only when it first moves cannot be rated over its first step.
void WatchState::count_counters(const CounterSnapshot& snapshot) {
  for (const NicSample& n : snapshot.nics) {
    for (const CounterValue& v : n.values) {
      auto key = std::make_tuple(n.nic, v.source, v.name);
      if (counter_index_.count(key)) continue;
      const auto spec = find_counter(v.source, n.driver, v.name);
      counter_index_.emplace(std::move(key), counters_.size());
      counters_.push_back({n.nic, v.source, v.name, spec ? spec->kind : CounterKind::kOther, 0});
    }
  }
}

void WatchState::add_growth(const NicDelta& d) {
  for (const CounterDelta& c : d.counters) {
    const auto it = counter_index_.find(std::make_tuple(d.nic, c.source, c.name));
    if (it != counter_index_.end()) counters_[it->second].total += c.delta;
  }
}

bool WatchState::compared(const std::string& nic, const std::string& driver,
                          double bytes_per_s) const {
  if (driver == "tcp") return false;
  if (!thresholds_.rails.empty()) return is_listed_rail(nic, thresholds_.rails);
  return is_rdma_port(driver) || active_interfaces_.count(nic) > 0 ||
         bytes_per_s >= thresholds_.imbalance_min_bytes_per_s;
}

std::vector<WatchFinding> WatchState::window_imbalance() {
  double covered_s = 0;
  for (const auto& w : window_) covered_s += w.first;
  // Judged on a full window only: the first seconds of a job (one NIC bootstrapping, the others
  // not yet) are not a finding.
  if (covered_s <= 0 || covered_s < thresholds_.imbalance_window_s * 0.999) return {};
  std::map<std::string, std::uint64_t> bytes;
  for (const auto& w : window_) {
    for (const auto& [nic, b] : w.second) bytes[nic] += b;
  }
  std::vector<RailTraffic> rails;
  for (const NicTotals& t : totals_) {
    if (t.vanished || !bytes.count(t.nic)) continue;
    const double rate = static_cast<double>(bytes[t.nic]) / covered_s;
    if (t.driver == "netdev" && rate >= thresholds_.imbalance_min_bytes_per_s) {
      active_interfaces_.insert(t.nic);
    }
    rails.push_back({t.nic, t.driver, rate, compared(t.nic, t.driver, rate)});
  }
  return rail_imbalance(rails, thresholds_, covered_s);
}

WatchInterval WatchState::add(const CounterSnapshot& next) {
  WatchInterval out;
  out.interval_s = next.time_s - last_.time_s;
  out.deltas = counter_deltas(last_, next);
  count_counters(next);
  std::map<std::string, std::uint64_t> window_bytes;
  for (const NicDelta& d : out.deltas) {
    NicRates r = nic_rates(d);
    NicTotals& t = totals_of(d.nic, d.driver);
    t.vanished = d.vanished;
    if (!d.vanished && !d.appeared) {
      t.seconds += r.interval_s;
      t.traffic_bytes += r.traffic_bytes;
      t.peak_bytes_per_s = std::max(t.peak_bytes_per_s, r.bytes_per_s);
      t.errors += r.errors;
      t.congestion += r.congestion;
      t.flaps += r.flaps;
      t.intervals += 1;
      if (r.congestion > 0) t.congested_intervals += 1;
      for (const CounterDelta& c : d.counters) {
        if (c.kind == CounterKind::kErrors && c.delta > 0) t.errors_by_counter[c.name] += c.delta;
        if (c.kind == CounterKind::kErrors && c.saturated) t.saturated_errors.insert(c.name);
        if (c.kind == CounterKind::kFlaps) t.flaps_by_counter[c.name] += c.delta;
      }
      window_bytes[d.nic] = r.traffic_bytes;
    }
    add_growth(d);
    out.rates.push_back(std::move(r));
  }
  window_.emplace_back(out.interval_s, std::move(window_bytes));
  // Keep the shortest tail that still covers the window.
  double covered_s = 0;
  for (const auto& w : window_) covered_s += w.first;
  while (window_.size() > 1 &&
         covered_s - window_.front().first >= thresholds_.imbalance_window_s * 0.999) {
    covered_s -= window_.front().first;
    window_.pop_front();
  }

  out.findings = interval_findings(out.deltas);
  for (WatchFinding& f : window_imbalance()) {
    for (NicTotals& t : totals_) {
      if (t.nic == f.nic) t.imbalanced_intervals += 1;
    }
    out.findings.push_back(std::move(f));
  }
  std::set<std::pair<WatchFindingKind, std::string>> now;
  for (const WatchFinding& f : out.findings) {
    now.emplace(f.kind, f.nic);
    if (!previous_.count({f.kind, f.nic})) out.new_findings.push_back(f);
  }
  previous_ = std::move(now);
  last_ = next;
  return out;
}

std::vector<WatchFinding> WatchState::whole_run_imbalance() const {
  std::vector<RailTraffic> rails;
  for (const NicTotals& t : totals_) {
    if (t.vanished || t.seconds <= 0) continue;
    const double rate = t.average_bytes_per_s();
    rails.push_back({t.nic, t.driver, rate, compared(t.nic, t.driver, rate)});
  }
  return rail_imbalance(rails, thresholds_, elapsed_s());
}

}  // namespace ibscope::fabric
