#include <fmt/format.h>

#include <map>

#include "ibscope/measure/p2p.hpp"
#include "ibscope/transport/comm.hpp"
#include "link_measure.hpp"

namespace ibscope::accept {
namespace {

measure::P2pOptions p2p_options(const AcceptOptions& o, bool latency, const LinkRounds& rounds) {
  measure::P2pOptions p;
  const std::uint64_t bytes = latency ? o.lat_bytes : o.bw_bytes;
  p.sweep = measure::SweepSpec{.min_bytes = bytes,
                               .max_bytes = bytes,
                               .factor = 2,
                               .step_bytes = 0,
                               .explicit_bytes = {bytes}};
  p.latency = latency;
  p.bw = !latency;
  p.bibw = false;
  p.bw_both_directions = true;
  p.latency_iters = o.lat_iters;
  p.bw_iters = o.bw_iters;
  p.window = o.bw_window;
  p.warmup = o.warmup;
  p.timeout_s = o.timeout_s;
  p.pairs.mode = measure::PairsMode::kRounds;
  p.pairs.rounds = rounds.rounds;
  p.nic_counters = o.nic_counters;
  return p;
}

// What a UCX path between two hosts rides on, for the expected rate.
std::optional<LinkKind> kind_of_path(const std::string& transports, const Preflight& pre) {
  if (transports.find("tcp") != std::string::npos) return LinkKind::kTcpEthernet;
  if (pre.link_layer == "InfiniBand") return LinkKind::kInfiniBand;
  if (pre.link_layer == "Ethernet") return LinkKind::kRoceV2;
  return std::nullopt;
}

// "tcp/eth0[am,rma] tcp/eth0[...] | tag_send ..." (Comm::transports over UCX) -> "eth0": the
// device of the first lane, the NIC the path leaves by. "" when unknown.
std::string first_lane_device(const std::string& transports) {
  const auto slash = transports.find('/');
  if (slash == std::string::npos) return "";
  const auto end = transports.find_first_of("[ |", slash + 1);
  return transports.substr(slash + 1,
                           end == std::string::npos ? std::string::npos : end - slash - 1);
}

}  // namespace

LinkSet measure_links_ucx(transport::Comm& comm, const MeasureContext& ctx,
                          const LinkRounds& rounds) {
  const AcceptOptions& o = ctx.options;
  const bootstrap::Bootstrap& boot = comm.bootstrap();
  struct Figures {
    double latency_us = 0, ab = 0, ba = 0;
    std::string transports;
    std::vector<fabric::NicDelta> counters;
  };
  std::map<std::pair<int, int>, Figures> by_pair;
  auto collect = [&](const std::vector<measure::P2pRow>& rows) {
    for (const measure::P2pRow& r : rows) {
      const std::pair<int, int> key{std::min(r.rank_a, r.rank_b), std::max(r.rank_a, r.rank_b)};
      Figures& f = by_pair[key];
      f.counters = fabric::add_deltas(std::move(f.counters), r.nic_counters);
      if (r.test == "latency") {
        f.latency_us = r.time_us.p50;
      } else if (r.rank_a == key.first) {
        f.ab = r.bw_gbps;
        f.transports = r.transports;
      } else {
        f.ba = r.bw_gbps;
      }
    }
    if (ctx.sinks.p2p) ctx.sinks.p2p(rows);
  };
  if (ctx.sinks.phase && comm.rank() == 0) {
    ctx.sinks.phase(
        fmt::format("{} latency, {} B, UCX", rounds.retest ? "retest" : "all-pairs", o.lat_bytes));
  }
  measure::run_p2p(comm, p2p_options(o, true, rounds), collect);
  if (ctx.sinks.phase && comm.rank() == 0) {
    ctx.sinks.phase(fmt::format("{} bandwidth, both directions, {} B x {} in flight, UCX",
                                rounds.retest ? "retest" : "all-pairs", o.bw_bytes, o.bw_window));
  }
  measure::run_p2p(comm, p2p_options(o, false, rounds), collect);

  LinkSet set;
  bool missing_rate = false;
  for (const auto& [pair, f] : by_pair) {
    const auto [a, b] = pair;
    if (boot.host(a) == boot.host(b)) continue;
    LinkMeasurement m;
    m.rank_a = a;
    m.rank_b = b;
    m.host_a = boot.host(a);
    m.host_b = boot.host(b);
    m.measured_gbps = std::min(f.ab, f.ba);  // the worse direction is the link's
    m.latency_us = f.latency_us;
    LinkEvidence e;
    e.gbps_a_to_b = f.ab;
    e.gbps_b_to_a = f.ba;
    e.transports = f.transports;
    e.nic_a = e.nic_b = first_lane_device(f.transports);
    const bool tcp = f.transports.find("tcp") != std::string::npos;
    e.nic_counters = link_nics(f.counters, m.host_a, e.nic_a, m.host_b, e.nic_b, tcp);
    const std::optional<LinkKind> kind =
        o.link_kind ? o.link_kind : kind_of_path(f.transports, ctx.preflight);
    // Over RDMA transports the ports' rate is known; over TCP only --expect-gbps says it.
    e.line_rate_gbit = o.expect_line_gbit > 0 ? o.expect_line_gbit
                       : tcp                  ? 0
                                              : ctx.preflight.fabric_data_rate_gbit;
    if (kind && e.line_rate_gbit > 0) {
      e.link_kind = std::string(to_string(*kind));
      const std::uint32_t mtu =
          ctx.preflight.active_mtu_bytes > 0 ? ctx.preflight.active_mtu_bytes : 4096;
      m.expected_gbps = expected_payload_gbps(e.line_rate_gbit, *kind, mtu);
    } else {
      missing_rate = true;
    }
    set.links.push_back(m);
    set.evidence.push_back(e);
  }
  if (missing_rate) {
    set.notes.push_back(
        "no expected rate for some links (UCX over TCP, or an unknown link type): only the "
        "relative test judged them; give --expect-gbps <line rate> and --link-kind");
  }
  return set;
}

void merge_link_sets(LinkSet& into, const LinkSet& retest) {
  merge_retest(into.links, retest.links);
  for (std::size_t i = 0; i < retest.links.size(); ++i) {
    const LinkMeasurement& r = retest.links[i];
    for (std::size_t j = 0; j < into.links.size(); ++j) {
      const LinkMeasurement& l = into.links[j];
      if (l.rank_a != r.rank_a || l.rank_b != r.rank_b) continue;
      LinkEvidence& e = into.evidence[j];
      e.gbps_a_to_b = std::max(e.gbps_a_to_b, retest.evidence[i].gbps_a_to_b);
      e.gbps_b_to_a = std::max(e.gbps_b_to_a, retest.evidence[i].gbps_b_to_a);
      e.nic_counters =
          fabric::add_deltas(std::move(e.nic_counters), retest.evidence[i].nic_counters);
    }
  }
}

void judge_link_counters(LinkSet& links, const AcceptOptions& o) {
  if (!o.nic_counters) return;
  for (std::size_t i = 0; i < links.links.size(); ++i) {
    links.links[i].counters = judge_counters(links.evidence[i].nic_counters, o.counter_thresholds);
  }
}

}  // namespace ibscope::accept
