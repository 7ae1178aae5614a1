#include "ibscope/collectives/pattern/recursive.hpp"

#include <algorithm>

namespace ibscope::collectives::pattern {

int pow2_floor(int p) noexcept {
  int q = 1;
  while (q <= p / 2) q *= 2;
  return q;
}

int log2_exact(int pow2) noexcept {
  int k = 0;
  while ((1 << k) < pow2) ++k;
  return k;
}

RecursiveLayout recursive_layout(int rank, int p) noexcept {
  RecursiveLayout l;
  l.p = p;
  l.pow2 = pow2_floor(p);
  l.steps = log2_exact(l.pow2);
  const int rem = p - l.pow2;
  if (rank < 2 * rem) {
    // Same pairing as MPICH: the even rank hands its vector to the odd one.
    const bool even = rank % 2 == 0;
    l.role = even ? PrePostRole::kSendIdle : PrePostRole::kReduceJoin;
    l.prepost_partner = even ? rank + 1 : rank - 1;
    l.new_rank = even ? -1 : rank / 2;
  } else {
    l.new_rank = rank - rem;
  }
  return l;
}

int recursive_rank_of(int new_rank, int p) noexcept {
  const int rem = p - pow2_floor(p);
  return new_rank < rem ? 2 * new_rank + 1 : new_rank + rem;
}

namespace {

std::size_t block_offset(std::size_t count, int blocks, int b) noexcept {
  const auto ub = static_cast<std::size_t>(blocks);
  const auto i = static_cast<std::size_t>(b);
  return i * (count / ub) + std::min(i, count % ub);
}

// The window of blocks [first, first + n) new rank q holds before halving step `step`.
void window_before(int pow2, int new_rank, int step, int& first, int& n) noexcept {
  first = 0;
  n = pow2;
  for (int i = 0; i < step; ++i) {
    n /= 2;
    if ((new_rank >> i) & 1) first += n;
  }
}

}  // namespace

Span block_range(std::size_t count, int blocks, int first, int n) noexcept {
  const std::size_t begin = block_offset(count, blocks, first);
  return Span{begin, block_offset(count, blocks, first + n) - begin};
}

HalvingStep halving_step(std::size_t count, int pow2, int new_rank, int step) noexcept {
  int first = 0, n = 0;
  window_before(pow2, new_rank, step, first, n);
  const int half = n / 2;
  const Span lower = block_range(count, pow2, first, half);
  const Span upper = block_range(count, pow2, first + half, half);
  const bool keep_upper = ((new_rank >> step) & 1) != 0;
  return keep_upper ? HalvingStep{lower, upper} : HalvingStep{upper, lower};
}

DoublingStep doubling_step(std::size_t count, int pow2, int new_rank, int step) noexcept {
  const HalvingStep h = halving_step(count, pow2, new_rank, log2_exact(pow2) - 1 - step);
  return DoublingStep{h.keep, h.send};
}

Span halving_owned(std::size_t count, int pow2, int new_rank) noexcept {
  int first = 0, n = 0;
  window_before(pow2, new_rank, log2_exact(pow2), first, n);
  return block_range(count, pow2, first, n);
}

}  // namespace ibscope::collectives::pattern
