#pragma once
/// Runs one verbs probe across the job: every selected rank pair, in rounds of disjoint pairs
/// that run at the same time, every size. Each rank opens its own device/port (-d), each pair
/// builds its RC queue pairs, exchanges their QpAddress structs over the bootstrap, and
/// measures; rank 0 gathers the figures of both ends into rows.

#include <functional>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/probes/probe_options.hpp"

namespace ibscope::probes {

/// What rank 0 learns about every rank's port before the rounds start.
struct RankPort {
  std::string device;  ///< "rxe0:1"
  std::string link_layer;
  double data_rate_gbit = 0;
  int gid_index = -1;
  std::string gid;  ///< text of the chosen GID ("" when addressed by LID)
  std::uint32_t active_mtu_bytes = 0;
  std::string binding;  ///< what NUMA binding did ("bound to NUMA node 0 ...", or why not)
};

struct ProbeSinks {
  /// Rank 0 only: the ports of all ranks, once, before the first round.
  std::function<void(const std::vector<RankPort>&)> ports;
  /// Rank 0 only: the rows of one round (every pair and size of it), in order.
  std::function<void(const std::vector<ProbeRow>&)> rows;
};

/// Collective over the bootstrap: every rank calls it. Throws UsageError (options, fewer than
/// 2 ranks), EnvironmentError (no device, port down), VerbsError/CompletionError, TimeoutError
/// naming the stalled rank and peer, RemoteError when another rank failed.
void run_probe(Bootstrap& bootstrap, const ProbeOptions& options, const ProbeSinks& sinks);

/// The inline size asked for when -I is not given: perftest's 220 B for write and send
/// latency, none for bandwidth and reads.
int default_inline_bytes(const ProbeTest& test) noexcept;

}  // namespace ibscope::probes
