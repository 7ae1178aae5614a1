#pragma once
/// Hierarchical all-to-all-v: the hierarchical all-to-all (hier_alltoall.hpp) with per-peer
/// counts (CollectiveArgs::counts). The variable-size blocks a host sends a rank of another host
/// are gathered per rail and cross the network as one message per host pair and rail; inside
/// the host every block is one copy through shared memory.
///
/// L ranks on each of H hosts, rank (h, i) = h L + i; c[s][d] the elements rank s sends rank d
/// (the plan's matrix: every rank knows every count, so no count crosses the wire). Rail i joins
/// the ranks of local index i. Rank (h, i):
///   1. arrive: every local rank's send buffer is ready (a flag per rank in shared memory);
///   2. for its own host: copies each local rank j's block for it, c[(h, j)][(h, i)] elements,
///      straight from j's send buffer into its output;
///   3. for every other host g: gathers from each local rank j, reading its send buffer in place,
///      the block j sends to rank (g, i), in local-rank order, into one message of
///      sum_j c[(h, j)][(g, i)] elements, and sends it to (g, i) over rail i; receives the
///      message of (g', i) for every other host g', whose blocks are those of g' L .. g' L + L - 1
///      in source order: the receive buffer packs them in that order, so the message lands in
///      place, with no scatter. Empty blocks are left out of a message, and a message of no
///      elements is not sent (both sides know its size). The hosts go in the scattered
///      algorithm's windows (scattered_alltoall.hpp), in shifted order (round k: send to host
///      h+k, receive from host h-k). With one rank per host the message is the rank's own
///      block, sent from its send buffer: the scattered all-to-all-v over the hosts;
///   4. read: no local peer reads its send buffer any more (at the end, so the local copies
///      overlap the network).
/// Out of place only (alltoallv_call.hpp). The table of where the gathered blocks lie in the
/// local peers' buffers is made from the plan's matrix once per plan (O(L p)), not per call.
///
/// n is the mean bytes one rank sends (the row's size). With uniform counts this is the
/// hierarchical all-to-all's traffic and cost, which the registry prices it by
/// (hier_alltoall_cost_s, two tiers): per rank H-1 messages of n/H bytes over the network and
/// (L-1)/L n bytes read from local peers; for L > 1, 2 alpha_intra + (L-1)/L n beta_intra; for
/// H > 1, ceil((H-1)/W) alpha_inter + (H-1)/H n beta_inter (W = kScatteredWindowPeers). Skewed
/// counts load one rail's messages or one receiver more than the mean, so the formula is the
/// uniform case's, a lower bound (docs/methodology.md, "All-to-all-v"). busbw factor
/// (nccl-tests): (p-1)/p.
///
/// Host memory only; the placement must be blocks of equal size per host (LocalArena::create).

#include <cstddef>
#include <memory>
#include <vector>

#include "ibscope/collectives/algorithms/alltoallv_call.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

namespace ibscope::collectives {

class HierAlltoallv final : public CollectiveAlgorithm {
 public:
  /// Throws UsageError without the arena (options.arena) or for device memory.
  HierAlltoallv(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws UsageError for a call without counts, without their matrix (AlltoallvPlan::matrix),
  /// in place, or with buffers outside the arena; TimeoutError / RemoteError naming the peer
  /// (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  // Where this rank's gathers read, from one plan's matrix (elements).
  struct HostBlocks {
    std::shared_ptr<const CountsMatrix> matrix;  // the one it was made from (and kept alive)
    // [g L + j]: local rank j's block for rank (g, i): its elements, where it starts in j's send
    // buffer.
    std::vector<std::size_t> count, offset;
    std::vector<std::size_t> message_at;  // [g]: host g's message in the scratch; [H]: all
    std::vector<std::size_t> from_host;   // [g]: elements of host g's message to this rank
    std::size_t send_extent = 0;          // the most elements a local rank sends
  };
  const HostBlocks& host_blocks(const AlltoallvCall& call);

  transport::Comm& comm_;
  std::shared_ptr<intra_host::LocalArena> arena_;
  AlltoallvPrologue prologue_;
  Scratch scratch_;                         // the messages to other hosts
  std::vector<transport::Request> window_;  // one window's requests; its capacity is kept
  HostBlocks blocks_;                       // of the last plan's matrix
};

}  // namespace ibscope::collectives
