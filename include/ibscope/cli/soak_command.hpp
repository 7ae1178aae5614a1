#pragma once
/// `ibscope soak`: the all-reduce again and again for a duration, every iteration verified,
/// reported per window (drift of latency and bandwidth, RSS of every rank, #wrong), with a
/// verdict (collectives/harness/soak_run.hpp, measure/soak.hpp; docs/soak.md).
/// Exit status 0 PASS, 1 FAIL (#wrong > 0, RSS growth above --max-rss-growth, drift above
/// --max-drift when given, or a measurement error), 2 usage.

#include <CLI/CLI.hpp>
#include <string>

#include "ibscope/cli/flags.hpp"
#include "ibscope/collectives/harness/soak_run.hpp"
#include "ibscope/job/job.hpp"

namespace ibscope::cli {

struct SoakFlags {
  std::string duration = "10m";
  std::string window;  ///< empty: default_soak_window_s(duration)
  std::string max_rss_growth = "8M";
  double max_drift_percent = 0;
  /// The collective flags the soak takes (sizes, type, op, algorithm, chunk, tuning, memory).
  CollectiveFlags collective;
};

void add_soak_flags(CLI::App& app, SoakFlags& f);
/// Validates every flag (UsageError) before any rank starts.
collectives::SoakOptions to_options(const SoakFlags& f, double timeout_s);
/// The params recorded in the results' soak section.
results::SoakParams params_of(const collectives::SoakOptions& o);
/// Runs the soak, prints its windows and summary (ctx.table_out), records the soak section.
/// Returns 0 on PASS, 1 on FAIL.
int soak_body(job::JobContext& ctx, const collectives::SoakOptions& o);

}  // namespace ibscope::cli
