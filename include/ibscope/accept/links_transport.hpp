#pragma once
/// What measures a job's links: the verbs probes where every host has an ACTIVE RDMA port, UCX
/// otherwise, decided once by rank 0 (which holds the whole topology) for every rank. Used by
/// `ibscope accept` (its all-pairs phase) and `ibscope run` (its links phase).

#include <string_view>
#include <vector>

#include "ibscope/accept/accept_options.hpp"
#include "ibscope/accept/preflight.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::bootstrap {
class Bootstrap;
}

namespace ibscope::accept {

/// Collective (every rank calls it): the preflight of the job's topology (`hosts`, as
/// job::gather_topology gives it: whole on rank 0), with rank 0's RDMA verdict
/// (rdma_everywhere, no_rdma_reason) on every rank; the other fields are exact on rank 0 only.
/// `what` names the exchange in the bootstrap's errors. Throws TimeoutError/RemoteError from
/// the bootstrap, RemoteError for a malformed verdict.
Preflight agree_on_preflight(bootstrap::Bootstrap& boot,
                             const std::vector<topo::HostTopology>& hosts,
                             std::string_view what = "accept: preflight");

/// `requested`, with kAuto resolved: verbs when `pre.rdma_everywhere`, else UCX. Never kAuto.
/// Whether verbs can run where they were asked for is the caller's to say.
AcceptTransport links_transport(AcceptTransport requested, const Preflight& pre) noexcept;

}  // namespace ibscope::accept
