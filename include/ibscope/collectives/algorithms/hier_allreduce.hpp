#pragma once
/// Hierarchical all-reduce: intra-host reduce-scatter over shared memory, an inter-host ring
/// all-reduce among the ranks with the same local index (one per host: a rail), intra-host
/// all-gather over shared memory.
///
/// The buffers are the intra-host arena's (intra_host/local_arena.hpp): the collective harness
/// allocates them there for host memory, so the local steps read peers' data in place, single
/// copy:
///   1. arrive: every local rank's input is ready (a flag per rank in shared memory);
///   2. reduce-scatter: with L ranks per host, local index i reduces block i of the vector (L
///      blocks, block_of()) straight from every local rank's input into its own output, in
///      cache-sized chunks;
///   3. (several hosts) ring all-reduce of block i, in place, among the H ranks of local index
///      i (ring_pipeline.hpp over that rail), chunked like -A ring;
///   4. reduced: every block is final; all-gather: copy block j from local rank j's output;
///   5. done: no local peer reads this rank's buffers any more, so the caller may reuse them.
/// Small messages on one host (up to LocalArena::kSlotBytes, 16 KiB) take a shorter path with
/// one wait instead of three: each rank copies its input into its shared slot for the call
/// (two slots, alternating by call number, so the next call never overwrites what a slow peer
/// still reads), signals, waits for every local peer's signal, and folds all the slots in
/// local-rank order into its output (the same bits on every rank).
/// Every wait has the call's deadline and ends naming the local peer that did not arrive, or
/// the rank the bootstrap saw die.
///
/// Cost (two tiers; intra: the shared-memory tier, inter: the network between hosts):
///   3 alpha_intra + (L-1)/L n (gamma_intra + beta_intra) + ring all-reduce of n/L over H
/// (hier_allreduce_cost_s in cost.hpp). With one rank per host it is the ring.
///
/// Host memory only; the placement must be blocks of equal size per host (LocalArena::create).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/collectives/algorithms/ring_pipeline.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/transport/comm.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

namespace ibscope::collectives {

class HierAllreduce final : public CollectiveAlgorithm {
 public:
  /// Bytes reduced per pass of the local reduce-scatter: the output chunk stays in cache while
  /// every local input is folded into it.
  static constexpr std::size_t kLocalChunkBytes = 64 * 1024;

  /// Throws UsageError without the arena (options.arena) or for device memory.
  HierAllreduce(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  void reduce_local_block(const CollectiveArgs& a, pattern::Span block);
  // One host, at most LocalArena::kSlotBytes: copy in, one wait, every rank folds everything.
  void run_small(const CollectiveArgs& a, const Deadline& deadline);

  transport::Comm& comm_;
  std::shared_ptr<intra_host::LocalArena> arena_;
  RingPipeline inter_;
  std::vector<int> rail_;  // the ranks with this rank's local index, by host
  std::string what_;       // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
