#include "ibscope/collectives/pattern/ring.hpp"

#include <algorithm>

namespace ibscope::collectives::pattern {

Span ring_segment(std::size_t count, int p, int s) noexcept {
  const auto up = static_cast<std::size_t>(p);
  const auto us = static_cast<std::size_t>(s);
  const std::size_t base = count / up;
  const std::size_t extra = count % up;
  return Span{us * base + std::min(us, extra), base + (us < extra ? 1 : 0)};
}

RingStep ring_reduce_scatter_step(int rank, int p, int step) noexcept {
  return RingStep{mod(rank - step, p), mod(rank - step - 1, p)};
}

RingStep ring_allgather_step(int rank, int p, int step) noexcept {
  return RingStep{mod(rank + 1 - step, p), mod(rank - step, p)};
}

std::size_t chunk_count(std::size_t elems, std::size_t chunk_elems) noexcept {
  const std::size_t c = std::max<std::size_t>(chunk_elems, 1);
  return (elems + c - 1) / c;
}

Span chunk_of(const Span& span, std::size_t chunk_elems, std::size_t chunk) noexcept {
  const std::size_t c = std::max<std::size_t>(chunk_elems, 1);
  const std::size_t start = std::min(span.count, chunk * c);
  return Span{span.offset + start, std::min(c, span.count - start)};
}

}  // namespace ibscope::collectives::pattern
