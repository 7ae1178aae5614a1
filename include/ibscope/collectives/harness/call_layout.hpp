#pragma once
/// One verifiable call of a collective: where its arguments point inside a send and a receive
/// buffer (nccl-tests' conventions, collective.hpp), how a verification run fills its inputs,
/// and how it counts wrong elements. Shared by the sweep (one verified run per size) and the
/// soak (every iteration verified).

#include <cstddef>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/verify.hpp"

namespace ibscope {

/// One call's arguments, and where verification writes the input and reads the result.
/// Pointers borrow the caller's buffers.
struct CallLayout {
  CollectiveArgs args;
  std::byte* input = nullptr;  ///< this rank's contribution (broadcast: the root's vector)
  std::size_t input_count = 0, input_first = 0;
  std::byte* output = nullptr;  ///< what this rank checks
  std::size_t output_count = 0, output_first = 0;
};

/// The layout of a `count`-element call of `c` on rank `rank` of `ranks`, out of place or in
/// place, over `send` and `recv` (each at least count elements of `type`).
CallLayout make_call_layout(Collective c, int rank, int ranks, bool in_place, std::byte* send,
                            std::byte* recv, std::size_t count, DataType type, ReduceOp op,
                            int root);

/// Fills the inputs of one verification run and poisons what the call must overwrite.
void prepare_call(Collective c, int rank, const VerifiablePattern& pattern, const CallLayout& l,
                  bool in_place);

/// Elements of this rank's output that differ from what the collective must deliver.
std::size_t count_wrong_call(Collective c, int ranks, const VerifiablePattern& pattern,
                             const CallLayout& l);

/// The IBSCOPE_FAULT_CORRUPT_RANK test hook: flips one bit of one element of the output, as a
/// bit flip on the wire would. No-op on an empty output.
void corrupt_one_element(const CallLayout& l);

}  // namespace ibscope
