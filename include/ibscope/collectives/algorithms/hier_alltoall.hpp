#pragma once
/// Hierarchical all-to-all: the blocks a host sends another host are gathered per rail and cross
/// the network as one message per host pair and rail; inside the host every block is one copy
/// through shared memory.
///
/// L ranks on each of H hosts, rank (h, i) = h L + i (the intra-host arena's block placement);
/// b = count / p elements per block. Rail i joins the ranks of local index i. Rank (h, i):
///   1. arrive: every local rank's send buffer is ready (a flag per rank in shared memory);
///   2. for every other host g: gathers from each local rank j, reading its send buffer in place,
///      the block j sends to rank (g, i), L blocks in local-rank order into one message, and
///      sends it to (g, i) over rail i; receives the message of (g', i) for every other host
///      g', which is its output blocks g' L .. g' L + L - 1, in place (its senders in order).
///      The hosts go in the scattered algorithm's windows (scattered_alltoall.hpp), in shifted
///      order (round k: send to host h+k, receive from host h-k);
///   3. for its own host: copies each local rank j's block for it straight into its output;
///   4. read: no local peer reads its send buffer any more (out of place: at the end, so the
///      local copies overlap the network).
/// In place the gathering of step 2 and 3 runs first, for every host, into a scratch of the
/// whole buffer, and the reads are over on every local rank (step 4) before anything is
/// written into the buffer that the local peers read from.
///
/// n is the bytes of one rank's whole send buffer. Per rank: H-1 messages of n/H bytes over the
/// network; (L-1)/L n bytes read from local peers. Cost (intra: the shared-memory tier, inter:
/// the network between hosts): for L > 1, 2 alpha_intra + (L-1)/L n beta_intra; for H > 1,
/// ceil((H-1)/W) alpha_inter + (H-1)/H n beta_inter (W = kScatteredWindowPeers); with one
/// rank per host it is the scattered algorithm over the hosts. busbw factor (nccl-tests):
/// (p-1)/p.
///
/// Host memory only; the placement must be blocks of equal size per host (LocalArena::create).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

namespace ibscope::collectives {

/// The two-tier cost above, L = ranks_per_host, H = hosts.
double hier_alltoall_cost_s(const LinkCost& intra, const LinkCost& inter, double n_bytes,
                            int ranks_per_host, int hosts) noexcept;
/// The same with one link class (the registry's cost_s shape): every rank its own host.
double hier_alltoall_one_tier_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class HierAlltoall final : public CollectiveAlgorithm {
 public:
  /// Throws UsageError without the arena (options.arena) or for device memory.
  HierAlltoall(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  std::shared_ptr<intra_host::LocalArena> arena_;
  Scratch scratch_;                         // the messages to other hosts (in place: every block)
  std::vector<transport::Request> window_;  // one window's requests; its capacity is kept
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
