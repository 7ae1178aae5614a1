#pragma once
/// Verdicts on the rounds of `ibscope accept --pattern` (pure; unit-tested; docs/acceptance.md,
/// "Patterns"). A round (one per hub and size) fails when
///   bandwidth:  its aggregate (all flows' bytes over the slowest flow's time) is below
///               min_fraction of what it should carry: the hub's one link for incast (the
///               receiver's) and one-to-many (the sender's), one link per flow for bisection
///               (each flow has its own link in its direction); skipped when the link rate is
///               unknown (UCX over TCP without --expect-gbps);
///   fairness:   with 2 flows or more, Jain's index of the flows' rates is below min_fairness.
/// The failure names the hub and every flow with its rate. The round's NIC counters (its
/// flows' hosts) are judged as the links' are (accept/counter_verdict.hpp): congestion (ECN
/// marks, CNPs, port_xmit_wait) is a finding with its share, never a failure.

#include <vector>

#include "ibscope/accept/counter_verdict.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/results/accept_pattern.hpp"

namespace ibscope::accept {

struct PatternThresholds {
  double min_fraction = 0.8;  ///< --pattern-min-fraction: aggregate / expected
  double min_fairness = 0.8;  ///< --min-fairness: Jain's index
};

/// One verdict per (round, size) of `rows` (p2p rows with PatternFlowInfo, in measurement
/// order; rows without it are ignored). `link_gbps`: what one link should carry, GB/s; 0: no
/// absolute test.
std::vector<results::AcceptPattern> judge_pattern_rows(const std::vector<measure::P2pRow>& rows,
                                                       double link_gbps,
                                                       const PatternThresholds& thresholds,
                                                       const CounterThresholds& counters);

}  // namespace ibscope::accept
