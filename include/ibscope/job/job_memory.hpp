#pragma once
/// Where a sweep's buffers live, set up once per job body: the --mem / --mem-path requests of a
/// collective sweep (or a soak's) and of the p2p sweep, made into this rank's memory space
/// (measure/memory_setup.hpp) and handed to the options. Host memory on the automatic path,
/// the default, needs nothing: the options keep their null memory and every rank skips the
/// set-up alike.

#include <string>
#include <vector>

#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/job/job.hpp"
#include "ibscope/measure/p2p.hpp"

namespace ibscope::job {

/// Collective (every rank, with the same request): when `o.memory_request` asks for more than
/// host memory on the automatic path, sets up this rank's memory space and gives it to the
/// algorithms (`o.algorithm_options.memory`) and its path to the rows (`o.mem_path`). The
/// communicator's staging is changed: hold a transport::StagingScope around the sweep. Throws what
/// measure::setup_memory throws.
void set_up_memory(JobContext& ctx, collectives::CollectiveSweepOptions& o);

/// Each rank's memory kind and path ("host", "cuda"; "host", "staged", ...), by rank, on rank 0.
struct MemoryLabels {
  std::vector<std::string> kinds;
  std::vector<std::string> paths;
  bool empty() const noexcept { return kinds.empty(); }
};

/// Collective: the p2p sweep's memory, given per side (`o.memory_sides`: one for every rank, or
/// rank 0's and rank 1's with --pairs first; every rank but 1 takes the first). When any side
/// asks for more than host memory on the automatic path, sets up this rank's space into
/// `o.memory` and returns every rank's labels (rank 0; empty elsewhere); else returns empty.
MemoryLabels set_up_memory(JobContext& ctx, measure::P2pOptions& o);

}  // namespace ibscope::job
