#pragma once
/// The bandwidth of a traffic pattern (measure/traffic_pattern.hpp) over UCX: in each round
/// every flow streams iters x window messages of each size from its sender to its receiver, at
/// most one window in flight per flow, all flows at once after a common barrier; each receiver
/// acknowledges a flow once all of its messages arrived, and the sender times the flow from the
/// barrier to that acknowledgement. `warmup` windows per flow run first, untimed. Rank 0 gets one
/// bw row per flow (rank_a sends) with the round's aggregate and Jain's fairness index
/// (P2pRow::pattern), and the NIC counters of the flow's two hosts over the round.
/// Each rank computes its own flows of each round from the pattern; only the flow times (one
/// double per flow a rank sends) are gathered.

#include "ibscope/measure/p2p.hpp"

namespace ibscope::measure {

/// Called by run_p2p for a pattern other than pairs. Throws UsageError for a pattern that does
/// not fit the units (validate_pattern), TimeoutError / RemoteError from the transport.
void run_pattern_p2p(transport::Comm& comm, const P2pOptions& options, const P2pRowsSink& sink);

}  // namespace ibscope::measure
