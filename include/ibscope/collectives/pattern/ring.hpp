#pragma once
/// Ring pattern: pure rank and segment arithmetic, no I/O (unit-tested for every p in 1..64).
///
/// The buffer of `count` elements is cut into p segments whose sizes differ by at most one
/// element. Reduce-scatter step k (0..p-2): rank r sends segment (r-k) mod p to r+1 and
/// receives segment (r-k-1) mod p from r-1, reducing it with its own contribution. After p-1
/// steps rank r holds the full reduction of segment (r+1) mod p. All-gather step k (0..p-2):
/// rank r sends segment (r+1-k) mod p and receives segment (r-k) mod p. The segment a rank sends
/// at step k+1 is the one it received at step k, which is what lets chunks pipeline.

#include <cstddef>

namespace ibscope::collectives::pattern {

struct Span {
  std::size_t offset = 0;  ///< in elements
  std::size_t count = 0;   ///< in elements
};

inline int ring_next(int rank, int p) noexcept { return (rank + 1) % p; }
inline int ring_prev(int rank, int p) noexcept { return (rank + p - 1) % p; }
inline int mod(int a, int p) noexcept { return ((a % p) + p) % p; }

/// Segment s of a `count`-element buffer split across p ranks (the first count % p segments
/// get one extra element).
Span ring_segment(std::size_t count, int p, int s) noexcept;

struct RingStep {
  int send_segment;
  int recv_segment;
};
RingStep ring_reduce_scatter_step(int rank, int p, int step) noexcept;
RingStep ring_allgather_step(int rank, int p, int step) noexcept;
/// The segment rank r owns fully reduced after the reduce-scatter: (r+1) mod p.
inline int ring_owned_segment(int rank, int p) noexcept { return (rank + 1) % p; }

/// Chunks of a span, each at most `chunk_elems` elements (>= 1).
std::size_t chunk_count(std::size_t elems, std::size_t chunk_elems) noexcept;
Span chunk_of(const Span& span, std::size_t chunk_elems, std::size_t chunk) noexcept;

}  // namespace ibscope::collectives::pattern
