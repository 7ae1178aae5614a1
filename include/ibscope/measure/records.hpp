#pragma once
/// What a measurement produces, before any formatting: one row per (test, size), with the
/// statistics and every raw sample. Times in microseconds, bandwidths in GB/s (1e9 B/s).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/measure/stats.hpp"

namespace ibscope {

struct CollectiveRow {
  std::string collective;  ///< "allreduce", "reduce_scatter", "allgather", "broadcast"
  std::string algorithm;   ///< the algorithm that ran: "ring", "rd", ...
  std::string selected_by;  ///< empty when asked for by name; "auto: <rule or tuning file>"
  std::string type;        ///< "float"
  std::string op;          ///< "sum"; "none" for collectives that do not reduce
  int root = -1;           ///< broadcast root; -1 otherwise
  bool in_place = false;
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  int ranks = 0;
  Stats time_us;                  ///< per iteration, max over ranks
  double algbw_gbps = 0;          ///< size / mean time
  double busbw_gbps = 0;          ///< algbw x busbw_factor(collective, p) (nccl-tests)
  std::optional<std::uint64_t> wrong;  ///< #wrong summed over ranks; empty when -c 0
  std::vector<double> samples_us;
};

struct P2pRow {
  std::string test;  ///< "latency", "bw" (unidirectional) or "bibw" (bidirectional)
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b;
  std::uint64_t size_bytes = 0;
  int window = 1;     ///< messages in flight per timed iteration (bandwidth tests)
  Stats time_us;      ///< latency: half round trip; bandwidth: one window
  double bw_gbps = 0;  ///< bandwidth tests: bytes moved / mean time (both directions for bibw)
  double peak_bw_gbps = 0;  ///< best single window
  double msg_rate_mps = 0;  ///< million messages per second (bandwidth tests)
  std::string transports;   ///< UCX transports between the pair
  std::vector<double> samples_us;
};

}  // namespace ibscope
