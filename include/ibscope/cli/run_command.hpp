#pragma once
/// `ibscope run`, the main job: the whole suite in one results file — topology, link probes
/// (libibverbs probes where every host has an ACTIVE RDMA port, else UCX p2p; every pair in
/// disjoint rounds), the all-reduce sweep over every algorithm, small all-to-all and all-to-all-v
/// sweeps (exchange_suite()), each NIC's loopback, an incast between hosts and the congestion
/// test (cli/run_phases.hpp) — then, on rank 0 from that
/// file alone: the alpha-beta fits and the network's share of a training step for a default
/// workload laid out as this job (docs/model.md), and the HTML report of it all.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "ibscope/cli/probe_command.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/job/job.hpp"
#include "ibscope/measure/p2p.hpp"

namespace ibscope::cli {

struct RunFlags {
  bool skip_topo = false;
  bool skip_p2p = false;
  bool skip_allreduce = false;
  bool skip_alltoall = false;    ///< the small all-to-all and all-to-all-v sweeps
  bool skip_loopback = false;    ///< every NIC's loopback (cli/run_phases.hpp)
  bool skip_patterns = false;    ///< the incast between hosts
  bool skip_congestion = false;  ///< victims under an incast congestor
  bool skip_model = false;
  bool skip_report = false;
  std::string links = "auto";          ///< auto | ucx | verbs: what measures the links
  std::string workload = "llama2-7b";  ///< preset for the network-share line
};

void add_run_flags(CLI::App& app, RunFlags& f);

struct RunPlan {
  RunFlags flags;
  collectives::CollectiveSweepOptions allreduce;
  measure::P2pOptions p2p;
  /// The all-to-all and all-to-all-v sweeps (exchange_suite()); empty with --skip-alltoall.
  std::vector<collectives::CollectiveSweepOptions> exchanges{};
};

/// The suite's all-to-all sweeps, kept short (a few seconds on 2 local ranks): alltoall and
/// alltoallv (--counts zipf:1, MoE-like skew) at 4 KiB and 1 MiB per rank, float, pairwise
/// only, verified, at most 10 timed calls and 2 warm-up calls per row; memory, timeouts and
/// counters as the all-reduce's.
std::vector<collectives::CollectiveSweepOptions> exchange_suite(
    const collectives::CollectiveSweepOptions& allreduce);

/// The job body (job::run_job with JobTransport::kUcx). Returns 1 when a collective had wrong
/// elements, else 0.
int run_body(job::JobContext& ctx, const RunPlan& plan);

/// After the results file is written (rank 0), from that file alone: the fits and the
/// training-step line (printed with the tables), then the HTML report next to it
/// (`<results>.html`, output/html_report.hpp), its path printed (stderr when `table` is false).
/// Never fails the run: what cannot be done is printed as a note.
void analyse_run(const std::filesystem::path& results, const RunFlags& flags, bool table);

}  // namespace ibscope::cli
