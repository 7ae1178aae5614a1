#pragma once
/// One verifiable call of a collective: where its arguments point inside a send and a receive
/// buffer (nccl-tests' conventions, collective.hpp), how a verification run fills its inputs,
/// and how it counts wrong elements, each as the collective's descriptor says
/// (collectives/descriptor.hpp). Shared by the sweep (one verified run per size) and the
/// soak (every iteration verified).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/misplace.hpp"
#include "ibscope/collectives/harness/verify.hpp"

namespace ibscope::collectives {

/// One call's arguments, and where verification writes the input and reads the result.
/// Pointers borrow the caller's buffers.
struct CallLayout {
  CollectiveArgs args;
  std::byte* input = nullptr;  ///< this rank's contribution (broadcast: the root's vector)
  /// input_first: where the input sits in the full vector (all-gather: the rank's block).
  std::size_t input_count = 0, input_first = 0;
  std::byte* output = nullptr;  ///< what this rank checks
  /// output_first: where the output sits in the full vector (reduce-scatter: the rank's block;
  /// all-to-all: the rank's block of every sender's vector, which the output gathers).
  std::size_t output_count = 0, output_first = 0;
};

/// The elements a call of `c` asked for `count` elements moves over `ranks` ranks: `count`, or
/// less where the collective rounds it (all-to-all: a multiple of `ranks`, as nccl-tests). The
/// rows' size is this many elements.
std::size_t call_count(Collective c, std::size_t count, int ranks);

/// The layout of a call of `c` asked for `count` elements (its args.count is call_count()) on
/// rank `rank` of `ranks`, out of place or in place, over `send` and `recv` (each at least count
/// elements of `type`). All-to-all-v: `counts` is this rank's plan for the call (borrowed: it
/// must outlive the layout), and the buffers hold its totals.
CallLayout make_call_layout(Collective c, int rank, int ranks, bool in_place, std::byte* send,
                            std::byte* recv, std::size_t count, DataType type, ReduceOp op,
                            int root, const AlltoallvPlan* counts = nullptr);

/// The pattern that verifies `c` with `op` over `ranks` ranks. Collectives that do not reduce
/// (all-gather, broadcast; `op` ignored) deliver inputs unchanged, so their inputs need only be
/// representable: they use the min/max pattern, whose values span the type's whole exact
/// integer range (a sum pattern's shrink as p grows: 1..16 for bfloat16 at p = 16). Shared:
/// while one is in use, the same (type, op, ranks) gets the same tables (the soak's cases of
/// one type and op; the ranks of an in-process job, which are threads), built once.
std::shared_ptr<const VerifiablePattern> pattern_for(Collective c, DataType type, ReduceOp op,
                                                     int ranks);

/// Fills the inputs of one verification run and poisons what the call must overwrite. Every
/// rank of one run passes the same `seed` (the sweep: a per-run counter; the soak: the
/// iteration), so that each run's inputs and results differ from the previous run's.
void prepare_call(Collective c, int rank, const VerifiablePattern& pattern, const CallLayout& l,
                  bool in_place, std::uint64_t seed);

/// Elements of this rank's output that differ from what the collective must deliver, for the
/// `seed` prepare_call() used.
std::size_t count_wrong_call(Collective c, int ranks, const VerifiablePattern& pattern,
                             const CallLayout& l, std::uint64_t seed);

/// The IBSCOPE_FAULT_CORRUPT_RANK test hook: flips one bit of one element of the output, as a
/// bit flip on the wire would. No-op on an empty output.
void corrupt_one_element(const CallLayout& l);

/// The IBSCOPE_FAULT_MISPLACE test hook: applies `fault` to this rank's output, cut into
/// `ranks` blocks (block_of()) and chunks of a quarter of a block, a dropped chunk left
/// poisoned. Returns false where the output is too small for the fault (nothing changed).
bool misplace_output(const CallLayout& l, int ranks, misplace::Fault fault,
                     const VerifiablePattern& pattern);

}  // namespace ibscope::collectives
