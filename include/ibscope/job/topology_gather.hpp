#pragma once
/// The job-wide topology: every rank reads its host's topology (hwloc, sysfs, libibverbs), the
/// ranks gather it over the bootstrap, and rank 0 keeps one entry per host. What `ibscope topo`
/// and `ibscope run` record and print, and what accept's preflight judges.

#include <string>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::job {

/// This host as rank `rank` sees it: discovery, then the ports of its RDMA devices, then the
/// GPU<->NIC classes. Throws SystemError when hwloc fails; no RDMA device is not an error.
topo::HostTopology local_topology(const std::string& host, int rank);

/// Collective (every rank calls it): every rank's topology, one entry per host, on rank 0; on
/// the other ranks one entry per host with its name and ranks only (O(n) bytes, docs/scale.md).
/// Throws TimeoutError/RemoteError from the bootstrap, RemoteError when a rank sent a
/// malformed topology.
std::vector<topo::HostTopology> gather_topology(bootstrap::Bootstrap& bootstrap);

}  // namespace ibscope::job
