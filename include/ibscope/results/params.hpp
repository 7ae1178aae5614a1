#pragma once
/// The "params" of the collectives, p2p and probes sections: what the run was asked to do, as
/// the flags resolved it (sizes in bytes, times in seconds). Written by the commands, read back
/// for the record; results/README.md documents every field.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ibscope::results {

/// What every collective run records about its set-up, whether a sweep or a soak: which
/// collective over which types, ops, algorithms and memory. Read and written by one function
/// each (src/results/document_json.cpp), so the two sections cannot drift apart.
struct CollectiveSetup {
  std::string collective;
  int root = 0;
  std::optional<std::string> tuning_source;  ///< the --tuning file, when one chose algorithms
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::vector<std::string> types, ops, algorithms;
  std::uint64_t chunk_bytes = 0;  ///< 0: each algorithm's default
  double timeout_s = 0;
  std::string mem, mem_path;
  std::uint64_t stage_chunk_bytes = 0;
};

/// A collective sweep (`allreduce`, `reduce_scatter`, ..., and `run`'s collective phase).
struct CollectiveParams : CollectiveSetup {
  double step_factor = 0;
  std::uint64_t step_bytes = 0;
  int iters = 0, warmup_iters = 0;
  double warmup_ms = 0;  ///< the warm-up's time floor (0: -w calls only, or a file from before it)
  bool check = true;
  /// alltoallv: its --counts as given (uniform, zipf:S[:seed] or the file's path); absent else.
  std::optional<std::string> counts;
};

/// Point-to-point latency and bandwidth (`p2p`, and `run`'s p2p phase).
struct P2pParams {
  std::uint64_t min_bytes = 0, max_bytes = 0;
  double step_factor = 0;
  int latency_iters = 0, bw_iters = 0, warmup_iters = 0, window = 0;
  std::string pairs;  ///< "all" or "first"
  double timeout_s = 0;
  std::vector<std::string> mem;  ///< per side
  std::string mem_path;
  std::uint64_t stage_chunk_bytes = 0;
};

/// A libibverbs probe (`ibscope probe`): the perftest-style settings as requested.
struct ProbeParams {
  std::string test, verb, metric;
  std::vector<std::uint64_t> sizes_bytes;
  int iterations = 0, warmup = 0, qps = 0, tx_depth = 0, rx_depth = 0;
  int inline_bytes_requested = 0, cq_moderation = 0;
  std::uint32_t mtu_bytes_requested = 0;
  int gid_index_requested = -1;
  std::vector<std::string> devices;  ///< "rxe0:1"
  bool bidirectional = false;
  int qp_timeout = 0, retry_count = 0, rnr_retry = 0, service_level = 0, traffic_class = 0,
      hop_limit = 0, pkey_index = 0;
  bool bind_to_nic_numa = false;
  std::string mem, mem_initiator, mem_responder;
  double timeout_s = 0;
};

}  // namespace ibscope::results
