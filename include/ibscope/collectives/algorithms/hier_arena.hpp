#pragma once
/// The intra-host arena a hierarchical algorithm (-A hier of all-reduce, all-to-all) runs on:
/// the one check that the buffers are host memory and that the harness gave an arena.

#include <memory>
#include <string_view>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

namespace ibscope::collectives {

/// `o.arena`; UsageError for device memory (naming `gpu_alternatives`, "-A ring, tree or dbt")
/// or a caller that gave no arena.
std::shared_ptr<intra_host::LocalArena> hier_arena(const AlgorithmOptions& o,
                                                   std::string_view gpu_alternatives);

}  // namespace ibscope::collectives
