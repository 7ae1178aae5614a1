#pragma once
/// Scattered all-to-all (MPICH's "scattered" algorithm; pattern/alltoall.hpp): every message
/// posted at once, in windows of kScatteredWindowPeers peers, so that the network carries many
/// messages together instead of one round at a time.
///
/// Out of place: the rounds of the shifted exchange (round k: send to (r+k) mod p, receive from
/// (r-k) mod p), kScatteredWindowPeers rounds per window: every receive of a window posted,
/// then every send, then all waited for before the next window. The window is the same set of
/// rounds on every rank, so a window's messages only ever match inside it. In place: the rounds
/// of the paired exchange (round k: exchange block (k-r) mod p with rank (k-r) mod p), each
/// block to send copied first to its slot of a one-window scratch (up to
/// kScatteredWindowPeers blocks).
///
/// n is the bytes of one rank's whole send buffer (nccl-tests' size): each message is n/p bytes.
/// Bytes on the wire per rank: (p-1)/p n each way. Cost: ceil((p-1)/W) alpha + (p-1)/p n beta
/// (W = kScatteredWindowPeers: a window's messages overlap, so it pays one latency and the
/// rank's link carries its bytes); in place adds a local copy of (p-1)/p n. busbw factor
/// (nccl-tests): (p-1)/p.

#include <cstddef>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// Peers whose messages are in flight together (MPICH's MPIR_CVAR_ALLTOALL_THROTTLE default).
inline constexpr int kScatteredWindowPeers = 32;

/// The cost formula above; 0 for p <= 1. n_bytes: one rank's whole send buffer.
double scattered_alltoall_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class ScatteredAlltoall final : public CollectiveAlgorithm {
 public:
  /// Options give the memory space (scratch and the local copies); whole blocks are sent.
  ScatteredAlltoall(transport::Comm& comm, const AlgorithmOptions& options);
  /// Throws TimeoutError / RemoteError naming the peer (see CollectiveAlgorithm::run).
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  transport::Comm& comm_;
  Scratch scratch_;                         // in place: one window's blocks; only grows
  std::vector<transport::Request> window_;  // one window's requests; its capacity is kept
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
