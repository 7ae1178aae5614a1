#pragma once
/// What a measurement produces, before any formatting: one row per (test, size), with the
/// statistics and every raw sample. Times in microseconds, bandwidths in GB/s (1e9 B/s).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/core/collective_kind.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/fabric/counters.hpp"
#include "ibscope/measure/stall.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/measure/time_average.hpp"
#include "ibscope/memory/mem_path.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::measure {

/// A row's op as files and tables spell it: the op's name, "none" for a collective that does not
/// reduce.
inline std::string_view name_of(const std::optional<ReduceOp>& op) noexcept {
  return op ? name_of(*op) : std::string_view("none");
}

struct CollectiveRow {
  Collective collective = Collective::kAllreduce;
  std::string algorithm;    ///< the algorithm that ran: "ring", "rd", ...
  std::string selected_by;  ///< empty when asked for by name; "auto: <rule or tuning file>"
  DataType type = DataType::kFloat32;
  std::optional<ReduceOp> op;  ///< empty for collectives that do not reduce ("none" in files)
  int root = -1;               ///< broadcast root; -1 otherwise
  bool in_place = false;
  memory::MemKind mem = memory::MemKind::kHost;       ///< where the buffers were
  memory::MemPath mem_path = memory::MemPath::kHost;  ///< how they met UCX
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  int ranks = 0;
  /// Time per call as nccl-tests reports it: each rank's whole timed loop / iterations,
  /// combined over ranks as `average` says (measure/time_average.hpp).
  double time_us = 0;
  TimeAverage average = TimeAverage::kMean;
  double algbw_gbps = 0;               ///< size / time_us
  double busbw_gbps = 0;               ///< algbw x busbw_factor(collective, p) (nccl-tests)
  std::optional<std::uint64_t> wrong;  ///< #wrong summed over ranks; empty when -c 0
  /// All-to-all-v only (empty otherwise): max / mean of the call's bytes sent per rank, received
  /// per rank, and per ordered pair of ranks (p^2 pairs, self included); 1 is balanced
  /// (collectives/pattern/alltoallv_counts.hpp).
  std::optional<double> send_imbalance, recv_imbalance, pair_imbalance;
  /// Every timed call of one rank on its own clock: `iteration_rank`, the rank the others
  /// waited for (measure::waited_for_rank). -1 in files of schema version 1, whose samples were the
  /// slowest rank per iteration.
  int iteration_rank = 0;
  Stats iteration_us;              ///< summary of samples_us
  std::vector<double> samples_us;  ///< iteration_rank's calls, in order
  std::vector<Stall> stalls;       ///< calls far slower than the rest (measure/stall.hpp)
  /// Only when the sweep was asked to record arrivals: [rank][timed iteration] the moment each
  /// rank entered the collective, in seconds of that rank's own steady_clock (not comparable
  /// across hosts until corrected by measured clock offsets). Not written to results as is.
  std::vector<std::vector<double>> enter_s;
  /// The growth of every host's NIC counters over the row (warm-up and timed calls), read by
  /// each host's first rank outside the timed loop (measure/row_counters.hpp); empty when not
  /// read (--no-nic-counters). Only NICs that exist on both readings carry counters.
  std::vector<fabric::NicDelta> nic_counters;
};

/// A p2p row's place in a traffic pattern (measure/traffic_pattern.hpp): the row is one flow
/// of a round whose flows all ran at the same time. Per-flow figures are the row's own
/// (bw_gbps); the round's are repeated on each of its flows' rows.
struct PatternFlowInfo {
  std::string pattern;           ///< "incast:3", "one-to-many:2", "bisection"
  int round = 0;                 ///< the pattern's round (one per hub)
  std::string hub_host;          ///< incast: the receiver, one-to-many: the sender; "" bisection
  int hub_rank = -1;             ///< -1: bisection
  int flows = 0;                 ///< flows in the round
  double aggregate_bw_gbps = 0;  ///< all flows' bytes / the slowest flow's time (GB/s)
  double fairness_jain = 1;      ///< Jain's index of the flows' bw_gbps, (0, 1]
};

struct P2pRow {
  std::string test;  ///< "latency", "bw" (unidirectional) or "bibw" (bidirectional)
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b;
  std::uint64_t size_bytes = 0;
  int window = 1;           ///< messages in flight per timed iteration (bandwidth tests)
  Stats time_us;            ///< latency: half round trip; bandwidth: one window
  double bw_gbps = 0;       ///< bandwidth tests: bytes moved / mean time (both directions for bibw)
  double peak_bw_gbps = 0;  ///< best single window
  double msg_rate_mps = 0;  ///< million messages per second (bandwidth tests)
  std::string transports;   ///< UCX transports between the pair
  std::string mem = "host";       ///< "host" | "cuda" per side: "host", "cuda" or "host,cuda"
  std::string mem_path = "host";  ///< "host", "direct" or "staged" (per side like mem)
  std::vector<double> samples_us;
  std::vector<Stall> stalls;  ///< iterations far slower than the rest (measure/stall.hpp)
  /// The NIC counters' growth on the pair's two hosts over the row (measure/row_counters.hpp).
  std::vector<fabric::NicDelta> nic_counters;
  /// Set on the rows of `p2p --pattern` other than pairs: a bw row per flow, rank_a sending.
  std::optional<PatternFlowInfo> pattern;
};

/// One libibverbs probe measurement between two ranks (probes/): rank_a initiates, rank_b is
/// the target (both initiate when bidirectional). Latency rows fill time_us (write/send: half
/// round trip; read: one RDMA READ, a full round trip, as perftest reports it); bandwidth rows
/// fill the bandwidth fields and leave time_us empty.
struct ProbeRow {
  std::string test;  ///< "write_bw", "write_lat", "read_bw", "read_lat", "send_bw", "send_lat"
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b;
  std::string device_a, device_b;  ///< "rxe0:1"
  bool bidirectional = false;
  std::uint64_t size_bytes = 0;
  int iterations = 0;  ///< timed messages per QP (and per direction)
  int qps = 1;
  int tx_depth = 0;
  std::uint32_t mtu_bytes = 0;             ///< path MTU the QPs were brought up with
  int inline_bytes = 0;                    ///< messages up to this size were posted inline
  int gid_index_a = -1, gid_index_b = -1;  ///< -1: addressed by LID (InfiniBand)
  double line_rate_gbit = 0;               ///< the slower port's data rate, Gb/s (0: unknown)
  Stats time_us;
  double bw_gbps =
      0;  ///< average over the whole run, GB/s = 1e9 B/s (both directions if bidirectional)
  double peak_bw_gbps = 0;         ///< best window of consecutive signalled completions
  double msg_rate_mps = 0;         ///< million messages per second
  std::vector<double> samples_us;  ///< latency: every iteration
  /// The NIC counters' growth on the pair's two hosts over the row's round (every size of the
  /// round: probes read them once per round).
  std::vector<fabric::NicDelta> nic_counters;
};

}  // namespace ibscope::measure
