#include "ibscope/output/watch_prometheus.hpp"

#include <set>
#include <utility>

namespace ibscope::output::prometheus {
namespace {

Family watch_family(std::string name, std::string type, std::string help) {
  Family f;
  f.name = std::move(name);
  f.type = std::move(type);
  f.help = std::move(help);
  return f;
}

}  // namespace

std::vector<Family> watch_metrics(const fabric::WatchState& state,
                                  const fabric::WatchInterval& latest, const std::string& host,
                                  double unix_time_s) {
  using fabric::WatchFindingKind;
  Family counters = watch_family(
      "ibscope_nic_counter_total", "counter",
      "Growth of a NIC counter since ibscope watch started (32-bit wraps and resets handled), in "
      "the counter's own unit (port_xmit_data and port_rcv_data count 4-octet words)");
  for (const auto& c : state.counter_totals()) {
    counters.samples.push_back({{{"host", host},
                                 {"nic", c.nic},
                                 {"source", std::string(fabric::name_of(c.source))},
                                 {"counter", c.name},
                                 {"kind", std::string(fabric::name_of(c.kind))}},
                                static_cast<double>(c.total)});
  }
  Family bytes = watch_family("ibscope_nic_traffic_bytes_total", "counter",
                              "Bytes the NIC sent plus received since ibscope watch started");
  Family rate =
      watch_family("ibscope_nic_rate_bytes_per_second", "gauge",
                   "Bytes per second the NIC sent plus received over the latest interval");
  Family finding = watch_family(
      "ibscope_nic_finding", "gauge",
      "1 when ibscope watch raised the finding (errors, flap, congestion, rail_imbalance) for the "
      "NIC in the latest interval, else 0");
  std::set<std::pair<WatchFindingKind, std::string>> raised;
  for (const auto& f : latest.findings) raised.emplace(f.kind, f.nic);
  for (const auto& t : state.totals()) {
    if (t.vanished) continue;
    const std::vector<std::pair<std::string, std::string>> labels = {{"host", host},
                                                                     {"nic", t.nic}};
    if (t.driver != "tcp") bytes.samples.push_back({labels, static_cast<double>(t.traffic_bytes)});
    for (const auto& r : latest.rates) {
      if (r.nic == t.nic && t.driver != "tcp") rate.samples.push_back({labels, r.bytes_per_s});
    }
    for (const WatchFindingKind k :
         {WatchFindingKind::kErrors, WatchFindingKind::kFlap, WatchFindingKind::kCongestion,
          WatchFindingKind::kRailImbalance}) {
      finding.samples.push_back(
          {{{"host", host}, {"nic", t.nic}, {"finding", std::string(name_of(k))}},
           raised.count({k, t.nic}) ? 1.0 : 0.0});
    }
  }
  Family stamp = watch_family("ibscope_watch_last_sample_timestamp_seconds", "gauge",
                              "Unix time of ibscope watch's latest reading");
  stamp.samples.push_back({{{"host", host}}, unix_time_s});
  Family interval = watch_family("ibscope_watch_interval_seconds", "gauge",
                                 "Length of ibscope watch's latest interval in seconds");
  interval.samples.push_back({{{"host", host}}, latest.interval_s});
  std::vector<Family> out;
  for (Family* f : {&counters, &bytes, &rate, &finding, &stamp, &interval}) {
    out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace ibscope::output::prometheus
