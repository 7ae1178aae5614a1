#pragma once
/// The job bodies of the UCX sweeps — a collective sweep (nccl-tests columns, crossovers when
/// several algorithms ran) and the p2p sweep — and the "params" each records in the results
/// file. Used by the per-collective subcommands, `ibscope p2p` and `ibscope run`.

#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/job/job.hpp"
#include "ibscope/measure/p2p.hpp"
#include "ibscope/results/params.hpp"

namespace ibscope::cli {

/// Runs the sweep, prints its table (ctx.table_out), records rows and the tuning table (when
/// two or more algorithms ran by name). Returns 1 when any element was wrong, else 0.
int collective_body(job::JobContext& ctx, const collectives::CollectiveSweepOptions& o);
/// Runs the p2p sweep, prints and records its rows. Returns 0.
int p2p_body(job::JobContext& ctx, const measure::P2pOptions& o);

results::CollectiveParams params_of(const collectives::CollectiveSweepOptions& o);
results::P2pParams params_of(const measure::P2pOptions& o);

}  // namespace ibscope::cli
