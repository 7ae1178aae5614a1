#pragma once
/// What every all-to-all-v algorithm does before it exchanges: checks the call (a plan for this
/// many ranks, out of place) and copies the rank's own block.

#include <string_view>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts.hpp"

namespace ibscope::collectives {

/// The call's plan. Throws UsageError when the call has none, one for another rank count, or
/// is in place (all-to-all-v has no in-place form here: a peer's block and the block from it
/// differ in size). `algorithm` names the caller in the message.
const AlltoallvPlan& alltoallv_plan_of(const CollectiveArgs& args, int p,
                                       std::string_view algorithm);

/// Copies this rank's block to itself (send block `rank` to receive block `rank`).
void alltoallv_own_block(const CollectiveArgs& args, const AlltoallvPlan& plan, int rank,
                         memory::MemorySpace& space);

}  // namespace ibscope::collectives
