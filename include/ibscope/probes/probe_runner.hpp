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
  /// --mem: where this rank's buffers live as initiator and as responder ("host", "cuda";
  /// "" for a role it never takes in this run).
  std::string mem_initiator, mem_responder;
  /// When either is "cuda": the GPU (topo::choose_gpu for this rank's NIC), its CUDA ordinal
  /// and name, the GPU<->NIC path class ("PIX".."SYS", "?"), how its memory registers with the
  /// NIC ("dmabuf", "peermem"), the choice's reason and warnings. Empty/-1 otherwise.
  std::string gpu;
  int cuda_device = -1;
  std::string gpu_name;
  std::string gpu_nic_path;
  std::string registration;
  std::string gpu_choice;
  std::vector<std::string> gpu_warnings;
};

struct ProbeSinks {
  /// Rank 0 only: the ports of all ranks, once, before the first round.
  std::function<void(const std::vector<RankPort>&)> ports;
  /// Every rank, after each round: on rank 0 the rows of the round (every pair and size of it),
  /// in order; none on the other ranks.
  std::function<void(const std::vector<measure::ProbeRow>&)> rows;
};

/// Collective over the bootstrap: every rank calls it. Throws UsageError (options, fewer than
/// 2 ranks, no GPU for --mem cuda), EnvironmentError (no device, port down, GPU memory that
/// cannot be registered), VerbsError/CompletionError, TimeoutError naming the stalled rank and
/// peer, RemoteError when another rank failed. With --mem cuda each rank that needs GPU
/// buffers discovers its host's topology, takes the GPU topo::choose_gpu picks for its NIC and
/// local rank, and registers a first buffer before any round, so that a GPU or registration
/// problem stops the run at once on the rank that has it.
void run_probe(bootstrap::Bootstrap& bootstrap, const ProbeOptions& options,
               const ProbeSinks& sinks);

/// The inline size asked for when -I is not given: perftest's 220 B for write and send
/// latency, none for bandwidth and reads.
int default_inline_bytes(const ProbeTest& test) noexcept;

}  // namespace ibscope::probes
