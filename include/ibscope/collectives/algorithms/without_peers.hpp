#pragma once
/// The all-reduce that needs no communication, shared by every all-reduce algorithm.

#include "ibscope/collectives/collective.hpp"

namespace ibscope::collectives {

/// One rank, or no elements: copies the input to the output when out of place. Returns true
/// when it handled the call (the algorithm then has nothing to do).
bool allreduce_without_peers(const CollectiveArgs& args, int p, memory::MemorySpace& space);

}  // namespace ibscope::collectives
