#pragma once
/// Bootstrap through the PMIx server of the launcher (mpirun, srun --mpi=pmix). Allgather is
/// Put + Commit + Fence(collect data, timeout) + Get of every rank's key. Built only when
/// libpmix is available (IBSCOPE_HAVE_PMIX).

#include <memory>

#include "ibscope/bootstrap/bootstrap.hpp"

namespace ibscope::bootstrap {

/// PMIx_Init, then job size, then (when IBSCOPE_NETNS is set) the move of this rank into its
/// network namespace (netns_placement.hpp), then the hostname exchange. Throws RemoteError when
/// no PMIx server answers or a fence fails (a rank lost by the launcher is named: its key for
/// that fence is missing), TimeoutError when a fence does not complete within `timeout_s`,
/// UsageError / SystemError when a rank cannot enter its namespace (every rank stops).
/// check_health() throws RemoteError naming a rank on this machine whose process has ended
/// (launchers kill the job about a second later and tell the survivors nothing first).
std::unique_ptr<Bootstrap> make_pmix_bootstrap(double timeout_s);

}  // namespace ibscope::bootstrap
