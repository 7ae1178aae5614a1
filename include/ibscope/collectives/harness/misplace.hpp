#pragma once
/// Misplacement faults: correctly computed data delivered to the wrong place, as a wrong block
/// index, an off-by-one offset or a lost chunk in an algorithm would. Pure functions on a byte
/// buffer, an element size and the block/chunk geometry of the collectives (blocks as
/// block_of(), chunks of at most `chunk_elems` elements inside a block, as pipelines cut them).
/// Used by the verification property tests and by the IBSCOPE_FAULT_MISPLACE test hook, to
/// prove that #wrong catches each kind of fault.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ibscope::collectives::misplace {

enum class Fault {
  kSwapBlocks,      ///< blocks `block` and `block`+1 exchange their contents
  kShiftElement,    ///< the whole buffer moves one element up (element 0 keeps its value)
  kShiftBlock,      ///< the whole buffer moves one block up (block 0 keeps its contents)
  kPermuteChunk,    ///< the elements of one chunk rotate by one
  kDropChunk,       ///< one chunk is never written: it keeps `stale` (the poison)
  kDuplicateBlock,  ///< block `block`+1 receives a copy of block `block`
};

inline constexpr std::array<Fault, 6> kAllFaults{Fault::kSwapBlocks, Fault::kShiftElement,
                                                 Fault::kShiftBlock, Fault::kPermuteChunk,
                                                 Fault::kDropChunk,  Fault::kDuplicateBlock};

/// "swap-blocks", "shift-element", "shift-block", "permute-chunk", "drop-chunk",
/// "duplicate-block".
std::string_view name_of(Fault f) noexcept;
/// The fault called `name` (as name_of() spells it), or nullopt.
std::optional<Fault> fault_named(std::string_view name) noexcept;

/// Where a fault applies: a buffer of `count` elements of `elem_bytes` bytes, cut into `blocks`
/// blocks (block_of()), each cut into chunks of at most `chunk_elems` elements (>= 1).
struct Geometry {
  std::size_t count = 0;
  std::size_t elem_bytes = 1;
  int blocks = 1;
  std::size_t chunk_elems = 1;
};

/// Applies `f` to `buffer` (count x elem_bytes bytes). `block` picks the block (swap and
/// duplicate use `block` and the next one, modulo blocks), `chunk` the chunk inside block
/// `block` (modulo its chunk count). `stale` is one element's bytes, written over a dropped
/// chunk. Returns false, changing nothing, where `buffer` is shorter than the geometry says or
/// the geometry leaves no room for the fault (one block for swap/duplicate/shift-block, one
/// element for shift-element and permute-chunk, an empty block for the chunk faults).
bool apply(Fault f, std::span<std::byte> buffer, const Geometry& g, int block, std::size_t chunk,
           std::span<const std::byte> stale);

}  // namespace ibscope::collectives::misplace
