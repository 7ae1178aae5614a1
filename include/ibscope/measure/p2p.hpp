#pragma once
/// Point-to-point tests over UCX between rank pairs (all pairs in round-robin rounds, every
/// pair of a round at the same time):
///   latency: ping-pong, half round trip per iteration, every sample kept;
///   bw:      a streams a window of messages to b, b acknowledges; bytes / time per window;
///   bibw:    both stream a window to each other at once.
/// With bw_both_directions the bw test runs a second time with the higher rank sending (a row
/// whose rank_a is the sender), so that a link slow in one direction only is seen.
/// With LocalPath::kShm, pairs on one host bypass UCX: the buffers are the intra-host arena's
/// (transport/intra_host/local_arena.hpp) and a message is a flag in shared memory plus one copy
/// by the receiver straight out of the sender's buffer (what -A hier does inside a host).

#include <functional>
#include <memory>

#include "ibscope/measure/pair_selection.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/measure/sweep.hpp"
#include "ibscope/measure/traffic_pattern.hpp"
#include "ibscope/memory/mem_path.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::measure {

/// How pairs of ranks on one host move their messages.
enum class LocalPath {
  kUcx,  ///< through UCX, like every other pair (its shared-memory transports)
  kShm,  ///< the intra-host arena: one copy by the receiver, flags in shared memory
};

/// Parses "ucx" | "shm". Throws UsageError.
LocalPath parse_local_path(std::string_view text);

struct P2pOptions {
  SweepSpec sweep{
      .min_bytes = 1, .max_bytes = 4ULL << 20, .factor = 2, .step_bytes = 0, .explicit_bytes = {}};
  int latency_iters = 1000;
  int bw_iters = 20;  ///< windows per bandwidth measurement
  int warmup = 10;
  int window = 64;
  bool latency = true;
  bool bw = true;
  bool bibw = true;
  bool bw_both_directions = false;
  /// all (default), first (--pairs), or kRounds (accept's plans); not kAuto, kRandom, kLog.
  PairSelection pairs;
  double timeout_s = 60;
  /// Read each host's NIC counters around every row (P2pRow::nic_counters).
  bool nic_counters = true;
  SweepProgress progress;  ///< optional; called before each (round, test, size)
  /// --mem per side: one entry for every rank, or two (A = rank 0, B = rank 1; --pairs first).
  std::vector<memory::MemoryRequest> memory_sides{memory::MemoryRequest{}};
  /// This rank's buffers (set per rank by the CLI from memory_sides); null: host memory.
  std::shared_ptr<memory::MemorySpace> memory;
  /// Pairs on one host: through UCX or the intra-host arena (host memory only, ranks placed in
  /// blocks of equal size per host; pairs across hosts always use UCX).
  LocalPath local_path = LocalPath::kUcx;
  /// --pattern: pairs (the tests above), or incast / one-to-many / bisection (bandwidth only,
  /// measure/pattern_p2p.hpp), over `pattern_units` (the rank standing for each unit; empty:
  /// every rank is a unit) with --pattern-hubs choosing the hubs.
  TrafficPattern pattern;
  HubSelection hubs;
  std::vector<int> pattern_units;
};

/// Called on every rank after each round: on rank 0 with the rows of the round (all pairs), in
/// order; on the other ranks with none (the samples go to rank 0 only).
using P2pRowsSink = std::function<void(const std::vector<P2pRow>&)>;

void run_p2p(transport::Comm& comm, const P2pOptions& options, const P2pRowsSink& sink);

}  // namespace ibscope::measure
