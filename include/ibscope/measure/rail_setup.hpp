#pragma once
/// Per rank, before UCX starts: which NIC (rail) its UCX traffic uses, the UCX variables that
/// follow from it (transport/ucx/env_plan.hpp), and the binding of its CPUs and memory to that
/// NIC's NUMA node. On a host without an ACTIVE RDMA port nothing changes (UCX's defaults:
/// shared memory and TCP). docs/ucx-transports.md.

#include <optional>
#include <string>
#include <vector>

#include "ibscope/results/document.hpp"
#include "ibscope/topo/rail_choice.hpp"
#include "ibscope/transport/transports.hpp"

namespace ibscope::bootstrap {
class Bootstrap;
}

namespace ibscope::measure {

struct RailRequest {
  std::string nic_list;  ///< --nic (accept: -d): "" = ibscope chooses
  bool bind = true;      ///< false: --no-bind
};

struct RailSetup {
  std::optional<topo::RailChoice> rail;  ///< empty: no ACTIVE RDMA port on this host
  transport::EnvPlan env;                ///< what was set, and why
  std::string binding;                   ///< "bound to NUMA node 0 (...)", or why not
  int numa_node = -1;                    ///< the node bound to (-1: none)
  std::string cpus;                      ///< that node's CPU list ("" when not bound)
  std::vector<std::string> warnings;     ///< topology discovery failures, binding failures
};

/// Local to this rank (no communication): discovers this host's topology and RDMA ports,
/// chooses the rail for boot.local_rank(), sets the UCX variables the plan names (never one
/// the user set), and binds unless told not to. Throws UsageError for a --nic this host lacks.
RailSetup set_up_rail(const bootstrap::Bootstrap& boot, const RailRequest& request);

/// Every rank's rail as rank 0 records it, and what the banner says about the job's rails.
struct JobRails {
  std::vector<results::RankRail> ranks;  ///< one per rank, by rank
  std::vector<std::string> notes;        ///< distinct job-wide UCX settings (UCX_TLS=...)
  std::vector<std::string> warnings;     ///< distinct: discovery, binding, lanes off the rail
};

/// Collective (one gather to rank 0): this rank's rail setup and the RDMA devices its UCX lanes
/// use (transport::Comm::devices_to each peer) to rank 0; the other ranks get an empty JobRails. A
/// rank whose lanes use a NIC other than its rail is a warning naming rank, host and both NICs.
JobRails gather_rails(bootstrap::Bootstrap& boot, const RailSetup& mine,
                      const std::vector<std::string>& lane_nics);

/// When this rank has a rail and its port is not ACTIVE now (a link that went down), one clause
/// for the error line: "its NIC rxe3:1 is DOWN (physical state Disabled): ...". Reads sysfs
/// (`sysfs_root`/class/infiniband/<nic>/ports/<port>/); nullopt when the port is ACTIVE, the
/// rank has no rail, or the state cannot be read. Never throws.
std::optional<std::string> rail_link_problem(const RailSetup& setup,
                                             const std::string& sysfs_root = "/sys") noexcept;

}  // namespace ibscope::measure
