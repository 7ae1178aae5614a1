#pragma once
/// Verifiable inputs (the nccl-tests idea): every rank fills its input with small integers
/// chosen so that the reduced result is exact in every type and in any reduction order; every
/// rank then computes the expected output locally and counts wrong elements exactly.
///
/// The inputs vary with the element index, so data reduced correctly but delivered to the wrong
/// place (a block swapped, a shift, a chunk permuted) is counted wrong too:
///
///  - T is a pseudo-random table of L = 65521 (prime) small integers, the same on every rank:
///    sum: values in [1, V] with V = limit / p (limit: the type's exact integer range, 256 for
///    bfloat16, 2048 for half, 2^24 otherwise), so every partial sum, in any order, is an
///    integer <= p V <= limit; min/max (and all-gather and broadcast, which use this table):
///    values in [-(limit-1), limit-1], and where that range holds at least L integers (every
///    type but the 16-bit ones) L *distinct* values, one in each bucket of b = (2 limit - 1) / L
///    consecutive integers (512 in 32- and 64-bit types).
///  - Rank r's input at element j is T[(phi(j) + K r) mod L] (+ (r / L) mod b in a distinct
///    table), with phi(j) = j + c(j / L, seed): inside each L-element segment the index walks the
///    table by one, and c, a hash of the segment number and the seed, moves each segment's
///    start, so the pattern has no period (a shift by L is caught) and changes with the seed
///    (stale data from the previous iteration is caught). K = 40503 spreads the ranks over the
///    table.
///  - Two ranks' inputs at the same index are at table positions K (r - r') apart, never 0 mod
///    L for r != r' < L (L is prime); from L ranks on, ranks L apart differ by their epoch inside
///    the bucket. In a distinct table that makes every element of two ranks' inputs differ, for
///    any index and any p up to L b (33.5 million in 32-bit types): all-gather, which indexes
///    each rank's block from 0 (call_layout.hpp), sees a block swapped, duplicated or shifted
///    onto another rank's place in every element, whatever the block size. In 16-bit types the
///    inputs differ at a table position, and their values in all but about 1 in 2 limit - 1.
///  - E[x] = the reduction over ranks of T[(x + K r) mod L] is computed once per pattern
///    (O(p L) integer operations); the expected result at j is E[phi(j) mod L].
///  - Rows of 2L typed elements (T and E written twice) make every run of one segment a single
///    contiguous slice: fill is memcpy of slices, check is memcmp of slices, counting element
///    by element only inside a slice that differs.
///  - Sum with p > limit (bfloat16 beyond 256 ranks): V = 1 and ranks >= limit contribute
///    zero. With V small (bfloat16 from 64 ranks) neighbouring expected values often coincide,
///    so misplacement is caught only where the moved values differ.
///  - Poison is -2 limit: outside every input and every result.

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "ibscope/core/datatype.hpp"

namespace ibscope::collectives {

class VerifiablePattern {
 public:
  /// Length of the table (prime): the pattern's segment length in elements.
  static constexpr std::size_t kTableLength = 65521;

  /// Builds the tables: O(nranks x kTableLength) integer operations, 1.5 to 3 MiB of memory.
  VerifiablePattern(DataType type, ReduceOp op, int nranks);

  /// The input of `rank` at element index i for `seed` (as a double; an exact small integer).
  double input(int rank, std::size_t i, std::uint64_t seed = 0) const;
  /// The exact all-reduce result at element index i for `seed`.
  double expected(std::size_t i, std::uint64_t seed = 0) const;

  /// Fills `count` elements of `buffer` with rank `rank`'s input for element indices
  /// first_index, first_index+1, ... (a block of the full vector starts at its offset). Every
  /// rank of one verified call must use the same `seed` (the sweep's run, the soak's iteration).
  void fill_input(int rank, void* buffer, std::size_t count, std::size_t first_index = 0,
                  std::uint64_t seed = 0) const;
  /// Fills `count` elements with the expected reduction for indices first_index, ... .
  void fill_expected(void* buffer, std::size_t count, std::size_t first_index = 0,
                     std::uint64_t seed = 0) const;
  /// Fills `count` elements with a value no correct result can have (so stale data is caught).
  void fill_poison(void* buffer, std::size_t count) const;
  /// Number of elements of `buffer` that differ from the expected reduction, for element
  /// indices first_index, first_index+1, ...
  std::size_t count_wrong(const void* buffer, std::size_t count, std::size_t first_index = 0,
                          std::uint64_t seed = 0) const;
  /// Number of elements of `buffer` that differ from rank `rank`'s input (what all-gather and
  /// broadcast must deliver), for element indices first_index, ...
  std::size_t count_wrong_input(int rank, const void* buffer, std::size_t count,
                                std::size_t first_index = 0, std::uint64_t seed = 0) const;

  /// Sum: the largest input value V; min/max: the largest |input|.
  std::int64_t value_bound() const noexcept { return value_bound_; }

 private:
  // Where in a doubled row rank `rank`'s slices start (K r mod L), or nullptr for a rank
  // that contributes zero.
  const std::byte* input_row(int rank, std::size_t& shift) const;
  void fill_from(const std::byte* row, std::size_t shift, void* buffer, std::size_t count,
                 std::size_t first_index, std::uint64_t seed) const;
  std::size_t count_mismatch(const std::byte* row, std::size_t shift, const void* buffer,
                             std::size_t count, std::size_t first_index, std::uint64_t seed) const;
  bool contributes(int rank) const noexcept;
  // What rank `rank` adds to every table value: its epoch r / L inside the bucket (0 with
  // hashed tables and for ranks below L).
  std::int64_t epoch_value(int rank) const noexcept;
  std::int64_t table_at(int rank, std::size_t x) const noexcept;

  DataType type_;
  ReduceOp op_;
  int nranks_;
  std::int64_t value_bound_;
  std::int64_t bucket_ = 0;  // > 0: distinct table, one value per bucket of this many integers
  std::vector<std::int64_t> table_;       // T, L values
  std::vector<std::int64_t> expected_;    // E, L values
  std::vector<std::byte> table_rows_;     // T twice, typed
  std::vector<std::byte> expected_rows_;  // E twice, typed
  std::vector<std::byte> zero_rows_;      // 2L typed zeros, only when some rank contributes 0
  // Rows of ranks from L on in a distinct table, by what they add; filled when first asked.
  mutable std::map<std::int64_t, std::vector<std::byte>> epoch_rows_;
};

}  // namespace ibscope::collectives
