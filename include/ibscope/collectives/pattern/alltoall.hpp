#pragma once
/// All-to-all pattern: pure rank and block arithmetic, no I/O (unit-tested for every p in
/// 1..64).
///
/// Blocks (nccl-tests' layout): a call of `count` elements sends count / p elements to every
/// rank, block j of the send buffer to rank j; rank j's receive buffer holds, in block q, what
/// rank q sent it. The last count mod p elements of either buffer take no part (the collective's
/// descriptor rounds the count down to a multiple of p, as nccl-tests does).
///
/// Shifted exchange (out of place): rounds k = 1..p-1; in round k rank r sends its block for
/// (r+k) mod p and receives from (r-k) mod p. Each round is a permutation (no rank receives two
/// messages in one round), and over the p-1 rounds every ordered pair of distinct ranks meets
/// exactly once.
///
/// Paired exchange (in place): rounds k = 0..p-1; in round k rank r exchanges with
/// (k-r) mod p, whose partner in round k is r again (an involution), so that the block a rank
/// sends to a peer and the block it receives from that peer, the same block of one buffer in
/// place, are exchanged in the same round through a one-block scratch. A rank meets itself in
/// exactly one round (k = 2r mod p): its own block, which stays where it is.

#include <cstddef>

#include "ibscope/collectives/pattern/ring.hpp"

namespace ibscope::collectives::pattern {

/// Elements each rank sends to each rank in a call of `count` elements over p ranks.
inline std::size_t alltoall_block_count(std::size_t count, int p) noexcept {
  return p > 0 ? count / static_cast<std::size_t>(p) : 0;
}

/// Block `peer` of a `count`-element all-to-all buffer over p ranks.
inline Span alltoall_block(std::size_t count, int p, int peer) noexcept {
  const std::size_t b = alltoall_block_count(count, p);
  return {static_cast<std::size_t>(peer) * b, b};
}

/// Shifted exchange, round k in 1..p-1: the rank `rank` sends to.
inline int shift_send_peer(int rank, int p, int round) noexcept { return mod(rank + round, p); }
/// Shifted exchange, round k in 1..p-1: the rank `rank` receives from.
inline int shift_recv_peer(int rank, int p, int round) noexcept { return mod(rank - round, p); }
/// Paired exchange, round k in 0..p-1: the rank `rank` exchanges with (itself in one round).
inline int paired_peer(int rank, int p, int round) noexcept { return mod(round - rank, p); }

}  // namespace ibscope::collectives::pattern
