#include "ibscope/collectives/algorithms/without_peers.hpp"

#include "ibscope/memory/memory_space.hpp"

namespace ibscope::collectives {

bool allreduce_without_peers(const CollectiveArgs& a, int p, memory::MemorySpace& space) {
  if (p != 1 && a.count != 0) return false;
  if (a.sendbuf != a.recvbuf && a.count > 0) {
    space.copy(a.recvbuf, a.sendbuf, a.count * size_of(a.type));
  }
  return true;
}

}  // namespace ibscope::collectives
