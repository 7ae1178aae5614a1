#pragma once
/// Verifiable inputs (the nccl-tests idea): every rank fills its input with small integers
/// chosen so that the reduced result is exact in every type and in any reduction order; every
/// rank then computes the expected output locally and counts wrong elements exactly.
///
/// Inputs are periodic in the element index with a short period, so fill and check are cheap
/// table look-ups even for GiB buffers.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ibscope/core/datatype.hpp"

namespace ibscope {

class VerifiablePattern {
 public:
  VerifiablePattern(DataType type, ReduceOp op, int nranks);

  /// The input of `rank` at element index i (as a double; always an exact small integer).
  double input(int rank, std::size_t i) const;
  /// The exact all-reduce result at element index i.
  double expected(std::size_t i) const;

  /// Fills `count` elements of `buffer` with rank `rank`'s input for element indices
  /// first_index, first_index+1, ... (a block of the full vector starts at its offset).
  void fill_input(int rank, void* buffer, std::size_t count, std::size_t first_index = 0) const;
  /// Fills `count` elements with a value no correct result can have (so stale data is caught).
  void fill_poison(void* buffer, std::size_t count) const;
  /// Number of elements of `buffer` that differ from the expected reduction, for element
  /// indices first_index, first_index+1, ...
  std::size_t count_wrong(const void* buffer, std::size_t count, std::size_t first_index = 0) const;
  /// Number of elements of `buffer` that differ from rank `rank`'s input (what all-gather and
  /// broadcast must deliver), for element indices first_index, ...
  std::size_t count_wrong_input(int rank, const void* buffer, std::size_t count,
                                std::size_t first_index = 0) const;

  std::size_t period() const noexcept { return period_; }

 private:
  std::vector<std::byte> typed_row(const std::vector<double>& values) const;
  // Two periods of rank `rank`'s input, typed (so any start index has a full period after it).
  std::vector<std::byte> input_rows(int rank) const;
  std::size_t count_mismatch(const std::vector<std::byte>& rows, const void* buffer,
                             std::size_t count, std::size_t first_index) const;

  DataType type_;
  ReduceOp op_;
  int nranks_;
  std::size_t period_;
  int modulus_;
  std::vector<std::byte> expected_rows_;  // two periods of the expected result, typed
};

}  // namespace ibscope
