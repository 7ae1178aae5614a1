#pragma once
/// The loopback step of the preflight, across the job (every rank calls it): on each host the
/// rank with local index 0 measures every NIC of its host into every memory
/// (probes/loopback.hpp), rank 0 gathers the figures, judges them (accept/loopback_verdict.hpp)
/// and turns each failure into a fatal preflight finding naming the NIC and its PCIe path.
/// Also `ibscope probe loopback` alone.

#include <vector>

#include "ibscope/accept/loopback_verdict.hpp"
#include "ibscope/accept/preflight.hpp"
#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/probes/loopback.hpp"
#include "ibscope/results/loopback.hpp"

namespace ibscope::accept {

struct LoopbackPhase {
  results::Loopback section;               ///< rank 0: figures and verdicts, for the results
  std::vector<LoopbackVerdict> verdicts;   ///< rank 0
  std::vector<PreflightFinding> findings;  ///< rank 0: one fatal finding per failure
};

/// Collective. Throws UsageError (options; --loopback-mem cuda without a GPU), RemoteError when
/// a rank sent malformed figures or failed, TimeoutError from the gather's deadline. A NIC that
/// cannot be measured is a failed figure, not an exception.
LoopbackPhase run_loopback_phase(bootstrap::Bootstrap& boot, const probes::LoopbackOptions& probe,
                                 const LoopbackThresholds& thresholds);

/// The results' record of judged verdicts (pure).
results::Loopback loopback_section(const std::vector<LoopbackVerdict>& verdicts,
                                   const probes::LoopbackOptions& probe,
                                   const LoopbackThresholds& thresholds);

/// The fatal findings of the verdicts (pure): one per failure line, device "nic:port".
std::vector<PreflightFinding> loopback_findings(const std::vector<LoopbackVerdict>& verdicts);

}  // namespace ibscope::accept
