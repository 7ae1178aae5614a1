#include "ibscope/collectives/algorithms/hier_arena.hpp"

#include <fmt/format.h>

#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

std::shared_ptr<intra_host::LocalArena> hier_arena(const AlgorithmOptions& o,
                                                   std::string_view gpu_alternatives) {
  if (space_of(o).kind() != memory::MemKind::kHost) {
    throw UsageError(fmt::format("-A hier: host memory only (--mem host); GPU buffers keep {}",
                                 gpu_alternatives));
  }
  if (!o.arena) {
    throw UsageError(
        "-A hier runs on buffers in the intra-host arena, which the collective harness "
        "allocates; this caller gave none");
  }
  return o.arena;
}

}  // namespace ibscope::collectives
