#include "ibscope/accept/accept_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "ibscope/accept/congestion_phase.hpp"
#include "ibscope/accept/links_transport.hpp"
#include "ibscope/accept/loopback_phase.hpp"
#include "ibscope/accept/pairing.hpp"
#include "ibscope/accept/pattern_phase.hpp"
#include "ibscope/accept/pattern_verdict.hpp"
#include "ibscope/accept/preflight.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/clock_sync.hpp"
#include "ibscope/measure/pair_schedule.hpp"
#include "ibscope/measure/row_counters.hpp"
#include "ibscope/topo/host_merge.hpp"
#include "ibscope/transport/comm.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"
#include "link_measure.hpp"
#include "section.hpp"

namespace ibscope::accept {
namespace {

// Rank 0's list of pairs, on every rank.
std::vector<std::pair<int, int>> broadcast_pairs(bootstrap::Bootstrap& boot,
                                                 const std::vector<std::pair<int, int>>& pairs) {
  std::vector<std::int32_t> flat;
  if (boot.rank() == 0) {
    for (const auto& [a, b] : pairs) {
      flat.push_back(a);
      flat.push_back(b);
    }
  }
  const bootstrap::Bytes b =
      boot.broadcast(std::span(reinterpret_cast<const std::byte*>(flat.data()),
                               flat.size() * sizeof(std::int32_t)),
                     "accept: suspect links");
  std::vector<std::int32_t> got(b.size() / sizeof(std::int32_t));
  if (!got.empty()) std::memcpy(got.data(), b.data(), got.size() * sizeof(std::int32_t));
  std::vector<std::pair<int, int>> out;
  for (std::size_t i = 0; i + 1 < got.size(); i += 2) out.emplace_back(got[i], got[i + 1]);
  return out;
}

// Rank 0's seed for random pairing (--pairs-seed, or drawn), on every rank: each rank then
// plans the same rounds from the hosts it already knows, so only 8 bytes cross the bootstrap.
std::uint64_t broadcast_seed(bootstrap::Bootstrap& boot, const PairSelection& spec) {
  std::uint64_t seed = 0;
  if (boot.rank() == 0) {
    if (spec.seed) {
      seed = *spec.seed;
    } else {
      std::random_device device;
      seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    }
  }
  const bootstrap::Bytes told = boot.broadcast(
      std::span(reinterpret_cast<const std::byte*>(&seed), sizeof seed), "accept: pairs seed");
  if (told.size() != sizeof seed) throw RemoteError("accept: malformed pairs seed from rank 0");
  std::memcpy(&seed, told.data(), sizeof seed);
  return seed;
}

bool broadcast_verdict(bootstrap::Bootstrap& boot, bool pass) {
  const std::byte mine{static_cast<unsigned char>(pass ? 1 : 0)};
  const bootstrap::Bytes told = boot.broadcast(std::span(&mine, 1), "accept: verdict");
  return !told.empty() && told[0] == std::byte{1};
}

struct AllreducePhase {
  std::vector<measure::CollectiveRow> rows;  // with enter_s
  std::vector<measure::ClockOffset> offsets;
  std::uint64_t wrong = 0;
};

AllreducePhase run_allreduce_phase(transport::Comm& comm, const AcceptOptions& o,
                                   const AcceptSinks& sinks) {
  AllreducePhase phase;
  const bool nic_counters = o.nic_counters;
  if (sinks.phase && comm.rank() == 0) sinks.phase("clock offsets to rank 0, for arrival times");
  phase.offsets = measure::measure_clock_offsets(comm, 16, o.timeout_s);
  collectives::CollectiveSweepOptions c;
  c.collective = Collective::kAllreduce;
  c.sweep = measure::SweepSpec{.min_bytes = o.allreduce_bytes.front(),
                               .max_bytes = o.allreduce_bytes.back(),
                               .factor = 2,
                               .step_bytes = 0,
                               .explicit_bytes = o.allreduce_bytes};
  c.iters = o.allreduce_iters;
  c.warmup = o.allreduce_warmup;
  c.check = true;
  c.in_place = false;
  c.algorithms = o.algorithms;
  if (c.algorithms.empty()) {
    for (const auto& a : collectives::algorithms_for(Collective::kAllreduce))
      c.algorithms.emplace_back(a.name);
    c.skip_unavailable = true;  // the default list: what cannot run here is left out
  }
  c.timeout_s = o.timeout_s;
  c.record_arrivals = true;
  c.nic_counters = nic_counters;
  if (sinks.phase && comm.rank() == 0) {
    std::string names;
    for (const auto& a : c.algorithms) names += (names.empty() ? "" : ",") + a;
    sinks.phase(fmt::format("all-reduce sweep ({}) with per-rank arrival times", names));
  }
  collectives::run_collective_sweep(comm, c, [&](const std::vector<measure::CollectiveRow>& rows) {
    for (const auto& r : rows) {
      if (r.wrong) phase.wrong += *r.wrong;
      phase.rows.push_back(r);
    }
    if (sinks.collective) sinks.collective(rows);
  });
  return phase;
}

// The all-reduce rows against their past: warnings only (the sweep here is short).
void add_row_history(const History& history, const HistoryThresholds& t,
                     const std::vector<measure::CollectiveRow>& rows, AcceptResult& result) {
  std::vector<RowFigure> figures;
  for (const auto& r : rows) {
    figures.push_back(RowFigure{std::string(ibscope::name_of(r.collective)), r.algorithm,
                                std::string(ibscope::name_of(r.type)), r.size_bytes, r.ranks,
                                r.busbw_gbps});
  }
  for (auto& w : row_history_warnings(figures, history, t)) {
    result.warnings.push_back(std::move(w));
  }
}

}  // namespace

AcceptResult run_accept(transport::Comm& comm, const std::vector<topo::HostTopology>& hosts,
                        const AcceptOptions& o, const AcceptSinks& sinks) {
  validate(o);
  bootstrap::Bootstrap& boot = comm.bootstrap();
  if (comm.size() < 2) {
    throw UsageError("accept needs at least 2 ranks: one per host under srun/mpirun, or --np N");
  }
  Preflight pre = agree_on_preflight(boot, hosts);
  if (o.loopback) {
    if (sinks.phase && comm.rank() == 0) {
      sinks.phase(fmt::format(
          "loopback of each host's NICs (RDMA WRITE and READ to itself, {} messages, budget {:g} "
          "s per host)",
          units::format_size(o.loopback_probe.size_bytes), o.loopback_probe.budget_s));
    }
    LoopbackPhase loopback = run_loopback_phase(boot, o.loopback_probe, o.loopback_thresholds);
    if (comm.rank() == 0) {
      pre.findings.insert(pre.findings.end(), loopback.findings.begin(), loopback.findings.end());
      pre.loopback = std::move(loopback.section);
      if (sinks.loopback) sinks.loopback(loopback.verdicts);
    }
  }
  const AcceptTransport transport = links_transport(o.transport, pre);
  if (transport == AcceptTransport::kVerbs && !pre.rdma_everywhere) {
    throw verbs::EnvironmentError(fmt::format(
        "--transport verbs: {}; run with --transport ucx to accept the network UCX uses",
        pre.no_rdma_reason));
  }

  // Every rank plans from the same host list: the merged topology's (the bootstrap knows every
  // rank's host on rank 0 only, docs/scale.md).
  const std::vector<std::string> host_of_rank = topo::host_of_rank(hosts, comm.size(), "accept");
  validate_pattern_for_hosts(o, host_of_rank);  // before any traffic
  // A congestion split that cannot work fails now, before the all-pairs phase.
  if (o.congestion.enabled) {
    (void)split_victims(host_of_rank, o.congestion.victim_fraction, o.congestion.victim_ranks);
  }
  const PairPlan plan = plan_pairs(o.pairs, host_of_rank, broadcast_seed(boot, o.pairs));
  if (sinks.phase && comm.rank() == 0) sinks.phase(plan.description);

  const MeasureContext ctx{o, pre, sinks};
  auto measure = [&](const LinkRounds& rounds) {
    return transport == AcceptTransport::kVerbs ? measure_links_verbs(boot, ctx, rounds)
                                                : measure_links_ucx(comm, ctx, rounds);
  };
  // The whole phase's counters too, per host NIC: a flap or errors between rows (or on a host
  // sitting a round out) are seen here.
  measure::RowCounters phase_counters(boot, o.nic_counters);
  phase_counters.begin();
  LinkSet links = measure(LinkRounds{plan.rounds, false});
  judge_link_counters(links, o);
  judge_link_history(links, o);
  AcceptReport report = judge_links(links.links, o.thresholds);
  // Retests are judged against the first measurement's median and MAD (link_verdict.hpp).
  const FabricReference reference = reference_of(report);
  int retests = 0;
  for (int k = 0; k < o.retests; ++k) {
    const auto again = broadcast_pairs(boot, suspects(report));
    if (again.empty()) break;
    const LinkSet retest = measure(LinkRounds{measure::disjoint_rounds(again), true});
    if (comm.rank() == 0) {
      merge_link_sets(links, retest);
      judge_link_counters(links, o);
      judge_link_history(links, o);
      report = judge_links(links.links, o.thresholds, &reference);
    }
    ++retests;
  }

  phase_counters.end();
  const std::vector<fabric::NicDelta> phase_nics = phase_counters.gather("accept: all-pairs phase");

  std::vector<measure::P2pRow> pattern_rows;
  if (!o.pattern.is_pairs()) pattern_rows = run_pattern_phase(comm, o, host_of_rank, sinks);

  std::optional<AllreducePhase> allreduce;
  if (o.allreduce) allreduce = run_allreduce_phase(comm, o, sinks);

  std::optional<CongestionResult> congestion;
  if (o.congestion.enabled) {
    congestion = run_congestion_phase(comm, host_of_rank,
                                      CongestionPhaseSpec{o.congestion, o.lat_bytes, o.lat_iters,
                                                          o.allreduce_iters, o.warmup, o.timeout_s},
                                      sinks.phase);
  }

  AcceptResult result;
  if (comm.rank() == 0) {
    SectionInputs in{o,       transport, pre,          links,
                     report,  retests,   boot.hosts(), std::nullopt,
                     nullptr, 0,         &plan,        &phase_nics};
    std::vector<results::AcceptPattern> patterns;
    if (!o.pattern.is_pairs()) {
      // What one link should carry: the fastest expectation of the all-pairs phase's links.
      double link_gbps = 0;
      for (const auto& l : links.links) link_gbps = std::max(link_gbps, l.expected_gbps);
      patterns =
          judge_pattern_rows(pattern_rows, link_gbps, o.pattern_thresholds, o.counter_thresholds);
      in.patterns = &patterns;
    }
    if (allreduce) {
      std::vector<ArrivalRow> arrivals;
      for (const auto& r : allreduce->rows) {
        arrivals.push_back(
            {fmt::format("{} {} B", r.algorithm, r.size_bytes), r.enter_s, r.samples_us});
      }
      in.stragglers = find_straggler(arrivals, allreduce->offsets, boot.hosts(), o.straggler);
      in.allreduce_rows = &allreduce->rows;
      in.allreduce_wrong = allreduce->wrong;
    }
    result = build_section(in);
    if (o.history && allreduce)
      add_row_history(*o.history, o.history_thresholds, allreduce->rows, result);
    if (congestion) {
      result.section.congestion = congestion->section;
      if (!congestion->section.pass) result.pass = result.section.pass = false;
      result.failures.insert(result.failures.end(), congestion->failures.begin(),
                             congestion->failures.end());
    }
  }
  result.pass = broadcast_verdict(boot, result.pass);
  return result;
}

}  // namespace ibscope::accept
