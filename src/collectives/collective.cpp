#include "ibscope/collectives/collective.hpp"

#include "ibscope/memory/memory_space.hpp"

namespace ibscope::collectives {

memory::MemorySpace& space_of(const AlgorithmOptions& options) {
  return options.memory ? *options.memory : *memory::host_space();
}

}  // namespace ibscope::collectives
