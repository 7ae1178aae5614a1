#include "ibscope/collectives/harness/misplace.hpp"

#include <algorithm>
#include <cstring>

#include "ibscope/collectives/collective.hpp"

namespace ibscope::collectives::misplace {
namespace {

constexpr std::array<std::string_view, kAllFaults.size()> kNames{"swap-blocks", "shift-element",
                                                                 "shift-block", "permute-chunk",
                                                                 "drop-chunk",  "duplicate-block"};

struct Bytes {
  std::byte* data;
  std::size_t size;
};

Bytes block_bytes(std::span<std::byte> buffer, const Geometry& g, int block) {
  const pattern::Span b = block_of(g.count, g.blocks, block);
  return {buffer.data() + b.offset * g.elem_bytes, b.count * g.elem_bytes};
}

Bytes chunk_bytes(std::span<std::byte> buffer, const Geometry& g, int block, std::size_t chunk) {
  const pattern::Span b = block_of(g.count, g.blocks, block);
  const std::size_t chunks = pattern::chunk_count(b.count, g.chunk_elems);
  if (chunks == 0) return {buffer.data(), 0};
  const pattern::Span c = pattern::chunk_of(b, g.chunk_elems, chunk % chunks);
  return {buffer.data() + c.offset * g.elem_bytes, c.count * g.elem_bytes};
}

}  // namespace

std::string_view name_of(Fault f) noexcept { return kNames[static_cast<std::size_t>(f)]; }

std::optional<Fault> fault_named(std::string_view name) noexcept {
  for (Fault f : kAllFaults) {
    if (name_of(f) == name) return f;
  }
  return std::nullopt;
}

bool apply(Fault f, std::span<std::byte> buffer, const Geometry& g, int block, std::size_t chunk,
           std::span<const std::byte> stale) {
  const std::size_t es = g.elem_bytes;
  const std::size_t total = g.count * es;
  if (g.blocks < 1 || es == 0 || total == 0 || buffer.size() < total) return false;
  block = ((block % g.blocks) + g.blocks) % g.blocks;
  const int next = (block + 1) % g.blocks;
  switch (f) {
    case Fault::kSwapBlocks:
    case Fault::kDuplicateBlock: {
      if (g.blocks < 2) return false;
      const Bytes a = block_bytes(buffer, g, block), b = block_bytes(buffer, g, next);
      const std::size_t n = std::min(a.size, b.size);
      if (n == 0) return false;
      if (f == Fault::kSwapBlocks)
        std::swap_ranges(a.data, a.data + n, b.data);
      else
        std::memcpy(b.data, a.data, n);
      return true;
    }
    case Fault::kShiftElement:
      if (total < 2 * es) return false;
      std::memmove(buffer.data() + es, buffer.data(), total - es);
      return true;
    case Fault::kShiftBlock: {
      const std::size_t by = block_bytes(buffer, g, 0).size;
      if (g.blocks < 2 || by == 0 || by >= total) return false;
      std::memmove(buffer.data() + by, buffer.data(), total - by);
      return true;
    }
    case Fault::kPermuteChunk: {
      const Bytes c = chunk_bytes(buffer, g, block, chunk);
      if (c.size < 2 * es) return false;
      std::rotate(c.data, c.data + es, c.data + c.size);
      return true;
    }
    case Fault::kDropChunk: {
      const Bytes c = chunk_bytes(buffer, g, block, chunk);
      if (c.size == 0 || stale.size() != es) return false;
      for (std::size_t at = 0; at < c.size; at += es) std::memcpy(c.data + at, stale.data(), es);
      return true;
    }
  }
  return false;
}

}  // namespace ibscope::collectives::misplace
