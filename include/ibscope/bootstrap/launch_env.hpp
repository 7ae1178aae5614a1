#pragma once
/// Which launcher started this process, read from the environment (pure: the environment is
/// passed in, so tests can feed any). Then connect_bootstrap() builds the matching Bootstrap.
///
/// Order: IBSCOPE_BOOTSTRAP=pmix|tcp|local forces a choice; otherwise IBSCOPE_RANK (set by the
/// local launcher) -> TCP store; PMIX_RANK + PMIX_NAMESPACE (mpirun, srun --mpi=pmix) -> PMIx
/// when built with it; IBSCOPE_ROOT with a launcher's rank variables (SLURM_PROCID/SLURM_NTASKS,
/// OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE) -> TCP store; no launcher at all -> local.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ibscope/bootstrap/bootstrap.hpp"

namespace ibscope::bootstrap {

enum class LaunchKind {
  kLocal,  ///< no launcher around: fork --np ranks here (or run alone when np == 1)
  kTcp,    ///< join a TCP store at IBSCOPE_ROOT with rank/size from the environment
  kPmix,   ///< a PMIx server is present
};

struct LaunchEnv {
  LaunchKind kind = LaunchKind::kLocal;
  int rank = -1;
  int size = -1;
  std::string rank_source;           ///< e.g. "SLURM_PROCID/SLURM_NTASKS", for messages
  std::optional<std::string> root;   ///< IBSCOPE_ROOT
  std::optional<std::string> token;  ///< IBSCOPE_TOKEN
  int listen_fd = -1;                ///< IBSCOPE_ROOT_FD, from the local launcher (rank 0)
};

using GetEnv = std::function<const char*(const char*)>;

/// Reads the launcher's variables. Throws UsageError when they are inconsistent, e.g. a launcher
/// is present but neither PMIx nor IBSCOPE_ROOT can be used, a rank is out of range, or
/// IBSCOPE_NETNS is set for a job that does not bootstrap through PMIx (netns_placement.hpp).
LaunchEnv detect_launch(const GetEnv& getenv, bool have_pmix);
LaunchEnv detect_launch_from_process_env();

/// Joins the job described by `env` (kTcp or kPmix). Throws as the bootstraps do.
std::unique_ptr<Bootstrap> connect_bootstrap(const LaunchEnv& env, double timeout_s);

}  // namespace ibscope::bootstrap
