#pragma once
/// `ibscope watch`'s metrics for node-exporter's textfile collector (docs/counters.md, "ibscope
/// watch"): every NIC counter's growth since the watch started (a Prometheus counter: rate() and
/// increase() work on it, a restart of the watch is a counter reset), the latest interval's
/// traffic rate per NIC, the findings as 0/1 gauges, and the sample's time (staleness alerts).
/// Pure formatting over output/prometheus.hpp: no I/O.

#include <string>
#include <vector>

#include "ibscope/fabric/watch_state.hpp"
#include "ibscope/output/prometheus.hpp"

namespace ibscope::output::prometheus {

/// Families: ibscope_nic_counter_total{host,nic,source,counter,kind} (counter),
/// ibscope_nic_traffic_bytes_total{host,nic} (counter), ibscope_nic_rate_bytes_per_second
/// {host,nic} (gauge, the latest interval), ibscope_nic_finding{host,nic,finding} (gauge, 1 when
/// raised in the latest interval, for every NIC and finding kind), and
/// ibscope_watch_{last_sample_timestamp_seconds,interval_seconds}{host}. `unix_time_s`: the
/// wall-clock time of the latest reading.
std::vector<Family> watch_metrics(const fabric::WatchState& state,
                                  const fabric::WatchInterval& latest, const std::string& host,
                                  double unix_time_s);

}  // namespace ibscope::output::prometheus
