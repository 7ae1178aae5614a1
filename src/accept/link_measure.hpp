#pragma once
// Internal to accept/: measuring every (or some) rank pairs' links for the verdicts, over UCX
// or over the verbs probes. Pairs of ranks on one host are measured by the rounds but not
// returned: they do not cross the fabric.

#include <string>
#include <utility>
#include <vector>

#include "ibscope/accept/accept_options.hpp"
#include "ibscope/accept/accept_runner.hpp"
#include "ibscope/accept/preflight.hpp"

namespace ibscope::bootstrap {
class Bootstrap;
}  // namespace ibscope::bootstrap

namespace ibscope::accept {

struct LinkEvidence {
  double gbps_a_to_b = 0,
         gbps_b_to_a = 0;     ///< UCX: each direction; verbs: half the bidirectional sum
  double line_rate_gbit = 0;  ///< the data rate the expectation came from (0: none)
  std::string link_kind;      ///< "tcp", "ib", ...; "" when no expectation
  std::string transports;     ///< UCX transports / verbs devices
  std::string nic_a, nic_b;   ///< "mlx5_0:1" (verbs) or the UCX tag device
  /// The growth of the two hosts' NIC counters over the link's rows (every attempt).
  std::vector<fabric::NicDelta> nic_counters;
};

/// Parallel vectors: links[i] is described by evidence[i].
struct LinkSet {
  std::vector<LinkMeasurement> links;
  std::vector<LinkEvidence> evidence;
  std::vector<std::string> notes;  ///< e.g. why there is no absolute test
};

struct MeasureContext {
  const AcceptOptions& options;
  const Preflight& preflight;
  const AcceptSinks& sinks;
};

/// The rounds of disjoint rank pairs (a < b) to measure, the same on every rank: the plan's
/// (accept/pairing.hpp) or the suspects' for a retest.
struct LinkRounds {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  bool retest = false;
};

/// Every rank calls it; the result is the same on every rank.
LinkSet measure_links_ucx(transport::Comm& comm, const MeasureContext& ctx,
                          const LinkRounds& rounds);

/// Every rank calls it; the result is complete on rank 0 only.
LinkSet measure_links_verbs(bootstrap::Bootstrap& bootstrap, const MeasureContext& ctx,
                            const LinkRounds& rounds);

/// Keeps the better figures of every pair measured again (link_verdict.hpp merge_retest), and
/// adds the retest's counters to the link's.
void merge_link_sets(LinkSet& into, const LinkSet& retest);

/// Judges every link's counters (LinkMeasurement::counters) when they were read.
void judge_link_counters(LinkSet& links, const AcceptOptions& options);

/// Judges every link against options.history (LinkMeasurement::history) when there is one.
void judge_link_history(LinkSet& links, const AcceptOptions& options);

}  // namespace ibscope::accept
