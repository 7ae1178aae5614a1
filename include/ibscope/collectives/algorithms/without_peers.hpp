#pragma once
/// The parts of a call that need no communication, shared by the algorithms of a collective:
/// the all-reduce of one rank or no elements, the all-to-all's own block.

#include "ibscope/collectives/collective.hpp"

namespace ibscope::collectives {

/// One rank, or no elements: copies the input to the output when out of place. Returns true
/// when it handled the call (the algorithm then has nothing to do).
bool allreduce_without_peers(const CollectiveArgs& args, int p, memory::MemorySpace& space);

/// All-to-all: copies this rank's own block (block `rank` of the send buffer into block `rank`
/// of the receive buffer) when out of place; in place it is already there. Returns true when
/// nothing is left to exchange (one rank, or empty blocks).
bool alltoall_own_block(const CollectiveArgs& args, int rank, int p, memory::MemorySpace& space);

}  // namespace ibscope::collectives
