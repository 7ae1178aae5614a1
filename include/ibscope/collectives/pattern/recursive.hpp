#pragma once
/// Recursive doubling and recursive halving: pure rank and range arithmetic, no I/O (unit-tested
/// for every p in 1..64 by a symbolic simulation, tests/unit/test_recursive_pattern.cpp).
///
/// Both patterns run on p' = the largest power of two <= p ranks. For any other p, the
/// first 2r ranks (r = p - p') pair up in a pre-step (Thakur, Rabenseifner, Gropp 2005; as
/// MPICH does): the even rank 2i sends its whole vector to the odd rank 2i+1, which reduces it
/// into its own and then takes part as "new rank" i; the even rank sits out and gets the result
/// back from 2i+1 in a post-step. Ranks from 2r on take part as new rank (rank - r).
///
/// Recursive doubling step k (0..log2 p' - 1): new rank q exchanges its whole vector with new
/// rank q XOR 2^k and both reduce.
///
/// Recursive halving (Rabenseifner's reduce-scatter): the vector is cut into p' blocks whose
/// sizes differ by at most one element (so any count works, also count < p'). At halving step k
/// (0..log2 p' - 1) new rank q holds a window of p'/2^k blocks; it splits it in two, keeps the
/// lower half when bit k of q is 0 (else the upper), sends the other half to q XOR 2^k and
/// reduces the half it keeps with the one it receives. After log2 p' steps q owns one block,
/// fully reduced (block bit_reverse(q)). The all-gather runs the halving steps backwards:
/// doubling step j repeats halving step k = log2 p' - 1 - j with the directions swapped (send
/// what was kept, receive what was sent), doubling the window.

#include <cstddef>

#include "ibscope/collectives/pattern/ring.hpp"

namespace ibscope::collectives::pattern {

/// Largest power of two <= p (p >= 1).
int pow2_floor(int p) noexcept;
/// log2 of a power of two.
int log2_exact(int pow2) noexcept;

/// What a rank does in the pre/post step of a non-power-of-two rank count.
enum class PrePostRole {
  kNone,       ///< no pre/post step: takes part directly (new rank = rank - (p - p'))
  kSendIdle,   ///< even rank of a pair: sends its vector to `partner`, sits out, gets the result
  kReduceJoin  ///< odd rank of a pair: receives `partner`'s vector, reduces, takes part, returns
};

struct RecursiveLayout {
  int p = 1;
  int pow2 = 1;   ///< p': ranks taking part in the power-of-two part
  int steps = 0;  ///< log2 p'
  PrePostRole role = PrePostRole::kNone;
  int prepost_partner = -1;  ///< rank of the pre/post partner, -1 with kNone
  int new_rank = -1;         ///< rank among the p' (0..p'-1), -1 with kSendIdle
};

/// The layout as seen from `rank` (0 <= rank < p).
RecursiveLayout recursive_layout(int rank, int p) noexcept;
/// The rank whose new rank is `new_rank` (the inverse of RecursiveLayout::new_rank).
int recursive_rank_of(int new_rank, int p) noexcept;
/// Partner new rank at doubling/halving step k.
inline int recursive_partner(int new_rank, int step) noexcept { return new_rank ^ (1 << step); }

/// Elements [offset of block `first`, offset of block `first + n`) of a `count`-element vector
/// cut into `blocks` blocks (the first count % blocks get one element more).
Span block_range(std::size_t count, int blocks, int first, int n) noexcept;

/// Recursive halving step k of new rank q among p' = pow2 ranks: the range sent to the partner
/// and the range kept (and reduced with the partner's copy of it). The partner's `send` is
/// this rank's `keep` and vice versa.
struct HalvingStep {
  Span send;
  Span keep;
};
HalvingStep halving_step(std::size_t count, int pow2, int new_rank, int step) noexcept;

/// Recursive doubling (all-gather) step j: send the fully reduced range, receive the partner's.
struct DoublingStep {
  Span send;
  Span recv;
};
DoublingStep doubling_step(std::size_t count, int pow2, int new_rank, int step) noexcept;

/// The range new rank q owns fully reduced after the halving steps (and sends first in the
/// all-gather).
Span halving_owned(std::size_t count, int pow2, int new_rank) noexcept;

}  // namespace ibscope::collectives::pattern
