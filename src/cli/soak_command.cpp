#include "ibscope/cli/soak_command.hpp"

#include <fmt/format.h>

#include <optional>

#include "ibscope/cli/sweep_bodies.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/job/job_memory.hpp"
#include "ibscope/output/soak_report.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::cli {
namespace {

constexpr const char* kSoakFooter =
    "Examples:\n"
    "  ibscope soak --np 4 --duration 2m --window 10s            # the CI soak\n"
    "  ibscope soak --np 4 --duration 8h --sizes 8K,64M -A ring,rd\n"
    "  ibscope soak --np 4 --duration 1h --max-rss-growth 16M --max-drift 20\n"
    "  srun --mpi=pmix -N 16 --ntasks-per-node=8 ibscope soak --duration 12h --mem cuda\n"
    "Exit status: 0 PASS, 1 FAIL (#wrong > 0, a rank's RSS grew more than --max-rss-growth "
    "after window 0, drift above --max-drift when given, a lost peer, a deadline), 2 usage, "
    "128+N interrupted by signal N (the windows so far are kept; no verdict).";

}  // namespace

void add_soak_flags(CLI::App& app, SoakFlags& f) {
  // Each flag shows its field's starting value (SoakFlags, CollectiveFlags) as its default.
  app.add_option("--duration", f.duration,
                 "How long to soak: seconds or 90s/30m/8h (rank 0's clock; the last window ends "
                 "there)")
      ->default_val(f.duration);
  app.add_option("--window", f.window,
                 "Report interval: one row per case per window. Default: 30s, or duration/20 "
                 "when longer, at most duration/2 (window 0 is warm-up)");
  app.add_option("--sizes", f.collective.sizes,
                 "Comma list of message sizes, each run every iteration (a latency-bound and a "
                 "bandwidth-bound one)")
      ->default_val("4K,4M");
  add_collective_case_flags(app, f.collective, Collective::kAllreduce,
                            "All-reduce algorithm: {}a comma list or all (each in turn every "
                            "iteration), or auto (picked once per size)");
  app.add_option("--max-rss-growth", f.max_rss_growth,
                 "FAIL when any rank's resident memory (VmRSS) grows more than this from the end "
                 "of window 0 (warm-up) to the end of the last window")
      ->default_val(f.max_rss_growth);
  app.add_option("--max-drift", f.max_drift_percent,
                 "FAIL when a case's last-window p50 time is more than this many percent above "
                 "the first steady window's (or its busbw that much below); 0 = report only")
      ->default_val(f.max_drift_percent)
      ->check(CLI::Range(0.0, 1e6));
  app.footer(kSoakFooter);
}

collectives::SoakOptions to_options(const SoakFlags& f, double timeout_s) {
  collectives::SoakOptions o;
  o.collective = to_options(f.collective, Collective::kAllreduce, timeout_s);
  o.duration_s = units::parse_duration_s(f.duration, "--duration");
  o.window_s = f.window.empty() ? measure::default_soak_window_s(o.duration_s)
                                : units::parse_duration_s(f.window, "--window");
  measure::check_soak_times(o.duration_s, o.window_s);
  o.thresholds.max_rss_growth_bytes = units::parse_size_bytes(f.max_rss_growth, "--max-rss-growth");
  o.thresholds.max_drift = f.max_drift_percent / 100;
  (void)collectives::soak_leak_bytes_per_s_from_env();  // a malformed test hook is a usage error,
                                                        // before any rank
  return o;
}

results::SoakParams params_of(const collectives::SoakOptions& o) {
  results::SoakParams p;
  static_cast<results::CollectiveSetup&>(p) = params_of(o.collective);  // the shared part
  p.sizes_bytes = o.collective.sweep.explicit_bytes;
  p.in_place = false;
  p.verify_every_iteration = true;
  p.duration_s = o.duration_s;
  p.window_s = o.window_s;
  p.thresholds = o.thresholds;
  return p;
}

int soak_body(job::JobContext& ctx, const collectives::SoakOptions& options) {
  collectives::SoakOptions o = options;
  o.collective.nic_counters = ctx.nic_counters;
  transport::StagingScope staging(ctx.comm());
  job::set_up_memory(ctx, o.collective);
  std::optional<output::SoakTable> table;
  if (ctx.table_out != nullptr) {
    fmt::print(ctx.table_out,
               "# soak: {:g} s in windows of {:g} s; every iteration verified; RSS limit {}\n",
               o.duration_s, o.window_s, units::format_size(o.thresholds.max_rss_growth_bytes));
    table.emplace(ctx.table_out);
    table->header();
  }
  std::vector<measure::SoakWindow> windows;
  if (ctx.results != nullptr) ctx.results->soak = results::Soak{params_of(o), {}, std::nullopt};
  windows = collectives::run_soak(ctx.comm(), o, [&](const measure::SoakWindow& w) {
    if (table) table->window(w);
    // Kept current, so a run that fails later still has its windows in the partial results.
    if (ctx.results != nullptr) ctx.results->soak->windows.push_back(w);
    ctx.rows_recorded();
  });
  measure::SoakSummary summary = measure::summarize_soak(windows, o.thresholds);
  apply_fault_hooks_to_verdict(ctx.fault_hooks, ctx.bootstrap.size(), summary.pass,
                               summary.reasons);
  if (ctx.results != nullptr) {
    ctx.results->soak->windows = windows;
    ctx.results->soak->summary = summary;
  }
  if (table) table->summary(summary, o.thresholds);
  if (!summary.pass) {
    if (ctx.comm().rank() == 0) {
      for (const auto& r : summary.reasons) log::error("soak FAILED: {}", r);
    }
    return 1;
  }
  return 0;
}

}  // namespace ibscope::cli
