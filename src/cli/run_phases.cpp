#include "ibscope/cli/run_phases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ibscope/accept/congestion_phase.hpp"
#include "ibscope/accept/loopback_phase.hpp"
#include "ibscope/accept/pattern_phase.hpp"
#include "ibscope/accept/pattern_verdict.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/output/congestion_table.hpp"
#include "ibscope/output/loopback_table.hpp"
#include "ibscope/topo/host_merge.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::cli {
namespace {

// Short phases: run is the everyday job, accept the long judge.
constexpr double kLoopbackBudgetS = 5;
constexpr std::uint64_t kPatternBytes = 256ULL << 10;
constexpr int kPatternWindow = 8;
constexpr int kPatternIters = 4;
constexpr int kCongestionLatencyIters = 100;
constexpr int kCongestionAllreduceIters = 10;
constexpr std::uint64_t kCongestionBytes = 256ULL << 10;

void note(job::JobContext& ctx, const std::string& line) {
  if (ctx.table_out == nullptr) return;
  fmt::print(ctx.table_out, "# {}\n", line);
  std::fflush(ctx.table_out);
}

std::vector<results::AcceptPattern> run_patterns(job::JobContext& ctx,
                                                 const std::vector<std::string>& host_of) {
  const int units = static_cast<int>(accept::pattern_units(host_of).size());
  const std::string pattern = run_pattern_for(units);
  if (pattern.empty()) {
    note(ctx, "patterns: skipped: one host (needs >= 2: the pattern's units are hosts)");
    return {};
  }
  accept::AcceptOptions o;
  o.pattern = measure::parse_traffic_pattern(pattern);
  o.pattern_hubs =
      measure::parse_hub_selection(fmt::format("sample:{}", std::min(units, kRunPatternHubs)));
  o.bw_bytes = kPatternBytes;
  o.bw_window = kPatternWindow;
  o.bw_iters = kPatternIters;
  o.warmup = 1;
  o.timeout_s = ctx.timeout_s;
  o.nic_counters = ctx.nic_counters;
  accept::validate_pattern_for_hosts(o, host_of);
  accept::AcceptSinks sinks;
  sinks.p2p = [&](const std::vector<measure::P2pRow>& rows) {
    if (ctx.results != nullptr) {
      for (const auto& r : rows) ctx.results->add_row(r);
    }
    ctx.rows_recorded();
  };
  sinks.phase = [&](std::string_view phase) { note(ctx, fmt::format("patterns: {}", phase)); };
  const auto rows = accept::run_pattern_phase(ctx.comm(), o, host_of, sinks);
  if (ctx.comm().rank() != 0) return {};
  // No expected link rate here (accept --pattern --expect-gbps has one): fairness is judged,
  // the aggregate is recorded.
  auto rounds = accept::judge_pattern_rows(rows, 0, o.pattern_thresholds, o.counter_thresholds);
  for (const auto& p : rounds) {
    note(ctx, fmt::format("pattern {} round {} onto {}: {} flows of {} B, aggregate {:.4g} GB/s, "
                          "Jain's index {:.3f}: {}{}",
                          p.pattern, p.round, p.hub_host, p.flows.size(), p.size_bytes,
                          p.aggregate_gbps, p.fairness_jain, p.pass ? "PASS" : "FAIL",
                          p.reason.empty() ? "" : " (" + p.reason + ")"));
  }
  return rounds;
}

std::optional<results::AcceptCongestion> run_congestion(job::JobContext& ctx,
                                                        const std::vector<std::string>& host_of,
                                                        std::size_t hosts) {
  accept::CongestionPhaseSpec spec;
  spec.options.enabled = true;
  spec.options.congestors = {accept::CongestorPattern::kIncast};
  spec.options.allreduce_bytes = kCongestionBytes;
  spec.options.congestor_bytes = kCongestionBytes;
  spec.latency_iters = kCongestionLatencyIters;
  spec.allreduce_iters = kCongestionAllreduceIters;
  spec.timeout_s = ctx.timeout_s;
  if (hosts < 2) {
    // Split by rank on one host, victims and congestors share its CPUs and memory: the impacts
    // would judge those, and a FAIL of the CPUs would read as the fabric's in the run's results.
    note(ctx,
         "congestion: skipped: one host (victims and congestors would share its CPUs and memory, "
         "not a network link; ibscope accept --congestion measures that split by rank)");
    return std::nullopt;
  }
  try {
    (void)accept::split_victims(host_of, spec.options.victim_fraction, {});
  } catch (const UsageError&) {
    note(ctx, fmt::format("congestion: skipped: {} rank(s) on {} host(s) (needs >= 2 victim and "
                          ">= 2 congestor ranks)",
                          host_of.size(), hosts));
    return std::nullopt;
  }
  const auto result = accept::run_congestion_phase(
      ctx.comm(), host_of, spec, [&](std::string_view phase) { note(ctx, std::string(phase)); });
  if (ctx.comm().rank() != 0) return std::nullopt;
  if (ctx.table_out != nullptr) {
    fmt::print(ctx.table_out, "{}", output::congestion_table(result.section));
  }
  note(ctx, fmt::format("congestion: {} (accept's limits: impact {:g}, tail impact {:g})",
                        result.section.pass ? "PASS" : "FAIL", spec.options.max_impact,
                        spec.options.max_tail_impact));
  for (const auto& f : result.failures) note(ctx, fmt::format("  FAIL {}", f));
  return result.section;
}

}  // namespace

std::string run_pattern_for(int hosts) {
  if (hosts < 2) return "";
  return fmt::format("incast:{}", std::min(hosts - 1, kRunPatternMaxSenders));
}

void run_suite_loopback(job::JobContext& ctx) {
  probes::LoopbackOptions probe;
  probe.budget_s = std::min(kLoopbackBudgetS, probes::default_loopback_budget_s(ctx.timeout_s));
  probe.timeout_s = ctx.timeout_s;
  const accept::LoopbackThresholds thresholds;
  const accept::LoopbackPhase phase = accept::run_loopback_phase(ctx.bootstrap, probe, thresholds);
  if (ctx.bootstrap.rank() != 0) return;
  if (ctx.results != nullptr) ctx.results->loopback = phase.section;
  if (phase.verdicts.empty()) {
    note(ctx, fmt::format("loopback: skipped: {}", phase.section.skipped_reason));
    return;
  }
  if (ctx.table_out != nullptr) output::print_loopback_table(ctx.table_out, phase.verdicts);
}

void run_suite_patterns_and_congestion(job::JobContext& ctx,
                                       const std::vector<topo::HostTopology>& hosts,
                                       const RunPhaseFlags& flags) {
  if (!flags.patterns && !flags.congestion) return;
  const std::vector<std::string> host_of = topo::host_of_rank(hosts, ctx.comm().size(), "run");
  std::vector<results::AcceptPattern> patterns;
  if (flags.patterns) patterns = run_patterns(ctx, host_of);
  std::optional<results::AcceptCongestion> congestion;
  if (flags.congestion) congestion = run_congestion(ctx, host_of, hosts.size());
  if (ctx.results == nullptr || (patterns.empty() && !congestion)) return;
  results::Acceptance a;
  a.transport = results::AcceptTransport::kUcx;
  a.pass = std::all_of(patterns.begin(), patterns.end(),
                       [](const results::AcceptPattern& p) { return p.pass; }) &&
           (!congestion || congestion->pass);
  a.patterns = std::move(patterns);
  a.congestion = std::move(congestion);
  a.notes.push_back(
      "ibscope run: the suite's pattern and congestion phases only (no all-pairs link "
      "verdicts: ibscope accept judges the links)");
  ctx.results->acceptance = std::move(a);
}

}  // namespace ibscope::cli
