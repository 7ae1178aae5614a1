#pragma once
/// `ibscope topo`: the job's topology (job/topology_gather.hpp), one entry per host; rank 0
/// prints the tables and records the "topology" section of the results file.

#include "ibscope/job/job.hpp"

namespace ibscope::cli {

/// The job body of `ibscope topo` (job::run_job with JobTransport::kBootstrapOnly). Returns 0.
int topo_body(job::JobContext& ctx);

}  // namespace ibscope::cli
