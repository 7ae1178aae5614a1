#pragma once
/// Bootstrap through the PMIx server of the launcher (mpirun, srun --mpi=pmix). Allgather is
/// Put + Commit + Fence(collect data, timeout) + Get of every rank's key. Built only when
/// libpmix is available (IBSCOPE_HAVE_PMIX).

#include <memory>

#include "ibscope/bootstrap/bootstrap.hpp"

namespace ibscope {

/// PMIx_Init, then job size and hostname exchange. Throws RemoteError when no PMIx server
/// answers, TimeoutError when a fence does not complete within `timeout_s`.
std::unique_ptr<Bootstrap> make_pmix_bootstrap(double timeout_s);

}  // namespace ibscope
