#pragma once
/// The fabric phases of `ibscope run`'s suite, each with its --skip-* flag and each skipped
/// with a one-line reason where the job cannot run it (docs/run.md):
///   loopback:   every NIC's RDMA WRITE and READ to itself (accept/loopback_phase.hpp), a
///               short budget; where no host has an ACTIVE RDMA port it is skipped;
///   patterns:   one incast between hosts (accept/pattern_phase.hpp): incast:K with
///               K = min(hosts - 1, 4) onto kRunPatternHubs hubs, short flows; units are hosts,
///               so a job on one host skips it;
///   congestion: GPCNet's victims under an incast congestor (accept/congestion_phase.hpp), short
///               windows; skipped when the job cannot give 2 victim and 2 congestor ranks.
/// The rounds' verdicts and the congestion result go to the results file's acceptance section
/// (patterns, congestion), the loopback to its loopback section: the sections accept and
/// `probe loopback` write, so `ibscope report` shows them. Their verdicts are printed and
/// recorded; they do not change run's exit status (accept's does).

#include <string>
#include <vector>

#include "ibscope/job/job.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::cli {

inline constexpr int kRunPatternMaxSenders = 4;
inline constexpr int kRunPatternHubs = 2;

struct RunPhaseFlags {
  bool loopback = true;
  bool patterns = true;
  bool congestion = true;
};

/// "incast:K" for a job of `hosts` hosts (K = min(hosts - 1, 4)); "" below 2 hosts.
std::string run_pattern_for(int hosts);

/// Every rank calls it. Rank 0 records the loopback section and prints the table or the reason
/// it was skipped.
void run_suite_loopback(job::JobContext& ctx);

/// Every rank calls it, after the sweeps; `hosts`: the job's merged topology (every rank knows
/// each host's ranks). Rank 0 records the acceptance section (patterns, congestion) when either
/// ran, and prints their verdicts or the reason each was skipped.
void run_suite_patterns_and_congestion(job::JobContext& ctx,
                                       const std::vector<topo::HostTopology>& hosts,
                                       const RunPhaseFlags& flags);

}  // namespace ibscope::cli
