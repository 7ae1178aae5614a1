#pragma once
/// `ibscope accept`: acceptance of a fabric across every rank of the job
/// (accept/accept_runner.hpp). Exit status 0 pass, 1 fail (or a measurement error), 2 usage.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "ibscope/accept/accept_options.hpp"
#include "ibscope/job/job.hpp"
#include "ibscope/results/baseline.hpp"

namespace ibscope::cli {

struct AcceptFlags {
  std::string transport = "auto";
  double expect_gbit = 0;
  std::string link_kind;
  double min_fraction = 0.9;
  double mad_k = 3;
  double max_latency_ratio = 3;
  int retests = 2;
  std::uint64_t max_link_errors = 0;
  double max_retransmit_ppm = 1000;
  std::uint64_t min_retransmits = 10;
  double congestion_pct = 1.0;
  std::string pairs = "auto";
  std::string pairs_seed;  ///< empty: drawn by rank 0
  std::string pattern = "pairs";
  std::string pattern_hubs = "all";
  double pattern_min_fraction = 0.8;
  double min_fairness = 0.8;
  std::string lat_size = "8";
  int lat_iters = 200;
  std::string bw_size = "1M";
  int bw_window = 16;
  int bw_iters = 10;
  int warmup = 2;
  int verbs_bw_iters = 2000;
  int verbs_lat_iters = 1000;
  std::string device;
  int gid_index = -1;
  bool no_bind = false;
  bool skip_allreduce = false;
  std::string algorithms;
  std::string ar_sizes = "64K,4M";
  int ar_iters = 20;
  int ar_warmup = 3;
  std::string prometheus_file;
  std::string baseline;    ///< --baseline FILE or "db"; empty: none
  int baseline_days = 30;  ///< --baseline db: the window of the links' own past runs
  double baseline_drop_pct = 10;
  double baseline_noise_k = 3;
  // --congestion (accept/congestion.hpp)
  bool congestion = false;
  std::string congestors = "all";
  double victim_fraction = 0.2;
  std::string victim_ranks;
  double max_congestion_impact = 2.0;
  double max_congestion_tail_impact = 4.0;
  std::string congestion_ar_size = "1M";
  std::string congestor_size = "1M";
  bool no_loopback = false;
  std::string loopback_budget;  // "": probes::default_loopback_budget_s
  std::string loopback_size = "1M";
  std::string loopback_mem = "auto";
  double loopback_slow_pct = 25;
  double loopback_min_fraction = 0.5;
};

/// What `ibscope accept` runs: the acceptance and where else its verdicts go.
struct AcceptCommandOptions {
  accept::AcceptOptions accept;
  /// node-exporter textfile (output/prometheus.hpp) rank 0 writes at the end, replacing the
  /// previous one atomically; empty: none.
  std::string prometheus_file;
  /// --baseline FILE, loaded and checked before the job; null: none.
  std::shared_ptr<const results::Baseline> baseline;
  /// --baseline db: the history database whose accept runs of the last `baseline_days` days
  /// rank 0 reads at the start (history/past_links.hpp); empty: none. Set by the caller, which
  /// knows --db and --out.
  std::filesystem::path baseline_db;
  int baseline_days = 30;
};

void add_accept_flags(CLI::App& app, AcceptFlags& f);

/// Flags -> options. Throws UsageError.
AcceptCommandOptions to_options(const AcceptFlags& f, double timeout_s);

/// The job body (job::run_job with JobTransport::kUcx). Returns 0 pass / 1 fail.
int accept_body(job::JobContext& ctx, const AcceptCommandOptions& options);

}  // namespace ibscope::cli
