#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/probes/probe_runner.hpp"
#include "link_measure.hpp"

namespace ibscope::accept {
namespace {

probes::ProbeOptions probe_options(const AcceptOptions& o, std::string_view test_name,
                                   const LinkRounds& rounds) {
  probes::ProbeOptions p = o.verbs;
  p.test = &probes::find_probe_test(test_name);
  const bool bw = p.test->metric == probes::Metric::kBandwidth;
  p.sizes_bytes = {bw ? o.bw_bytes : o.lat_bytes};
  p.iterations = bw ? o.verbs_bw_iters : o.verbs_lat_iters;
  p.warmup = std::min(100, p.iterations / 10);
  p.tx_depth = bw ? 128 : 1;
  p.inline_bytes = probes::default_inline_bytes(*p.test);
  // Both directions at once: a link slow either way lowers the sum.
  p.bidirectional = bw;
  p.timeout_s = o.timeout_s;
  p.pairs.mode = measure::PairsMode::kRounds;
  p.pairs.rounds = rounds.rounds;
  p.nic_counters = o.nic_counters;
  return p;
}

LinkKind kind_of_link_layer(const std::string& link_layer) {
  return link_layer == "Ethernet" ? LinkKind::kRoceV2 : LinkKind::kInfiniBand;
}

}  // namespace

LinkSet measure_links_verbs(bootstrap::Bootstrap& bootstrap, const MeasureContext& ctx,
                            const LinkRounds& rounds) {
  const AcceptOptions& o = ctx.options;
  std::map<std::pair<int, int>, measure::ProbeRow> latency, bandwidth;
  std::vector<probes::RankPort> ports;
  auto sinks_for = [&](std::map<std::pair<int, int>, measure::ProbeRow>& into) {
    probes::ProbeSinks s;
    s.ports = [&](const std::vector<probes::RankPort>& p) { ports = p; };
    s.rows = [&](const std::vector<measure::ProbeRow>& rows) {
      for (const measure::ProbeRow& r : rows) {
        into[{std::min(r.rank_a, r.rank_b), std::max(r.rank_a, r.rank_b)}] = r;
      }
      if (ctx.sinks.probe) ctx.sinks.probe(rows);
    };
    return s;
  };
  const char* what = rounds.retest ? "retest" : "all-pairs";
  if (ctx.sinks.phase && bootstrap.rank() == 0) {
    ctx.sinks.phase(fmt::format("{} latency, RDMA WRITE {} B, verbs", what, o.lat_bytes));
  }
  run_probe(bootstrap, probe_options(o, "write_lat", rounds), sinks_for(latency));
  if (ctx.sinks.phase && bootstrap.rank() == 0) {
    ctx.sinks.phase(
        fmt::format("{} bandwidth, RDMA WRITE {} B both directions, verbs", what, o.bw_bytes));
  }
  run_probe(bootstrap, probe_options(o, "write_bw", rounds), sinks_for(bandwidth));

  LinkSet set;
  if (bootstrap.rank() != 0) return set;
  for (const auto& [pair, row] : bandwidth) {
    if (row.host_a == row.host_b) continue;
    LinkMeasurement m;
    m.rank_a = pair.first;
    m.rank_b = pair.second;
    m.host_a = bootstrap.host(pair.first);
    m.host_b = bootstrap.host(pair.second);
    // Bidirectional: the sum of both directions; judged per direction.
    m.measured_gbps = row.bw_gbps / 2;
    if (auto it = latency.find(pair); it != latency.end()) m.latency_us = it->second.time_us.p50;
    LinkEvidence e;
    e.gbps_a_to_b = e.gbps_b_to_a = m.measured_gbps;
    e.transports = fmt::format("RC {} <-> {}", row.device_a, row.device_b);
    e.nic_a = row.device_a;
    e.nic_b = row.device_b;
    // The round's (every size) on the two ports the link used.
    std::vector<fabric::NicDelta> counters = row.nic_counters;
    if (auto it = latency.find(pair); it != latency.end()) {
      counters = fabric::add_deltas(std::move(counters), it->second.nic_counters);
    }
    e.nic_counters = link_nics(counters, m.host_a, row.device_a, m.host_b, row.device_b, false);
    e.line_rate_gbit = o.expect_line_gbit > 0 ? o.expect_line_gbit : row.line_rate_gbit;
    const LinkKind kind = o.link_kind ? *o.link_kind : kind_of_link_layer(ctx.preflight.link_layer);
    e.link_kind = std::string(to_string(kind));
    if (e.line_rate_gbit > 0)
      m.expected_gbps = expected_payload_gbps(e.line_rate_gbit, kind, row.mtu_bytes);
    set.links.push_back(m);
    set.evidence.push_back(e);
  }
  return set;
}

}  // namespace ibscope::accept
