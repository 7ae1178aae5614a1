#pragma once
/// One entry per host from one topology per rank (pure; unit-tested).

#include <string>
#include <string_view>
#include <vector>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::topo {

/// Groups `per_rank` by host name, in the order of each host's lowest rank. An entry keeps the
/// topology its lowest rank reported and the union of every rank's `ranks`, ascending. When
/// another rank on the same host reported a different topology (a container or cgroup that
/// shows it other CPUs or devices), a note says which ranks differ.
std::vector<HostTopology> merge_by_host(std::vector<HostTopology> per_rank);

/// Every rank's host, from the merged topology (each host lists its ranks; every rank has it,
/// where the bootstrap knows every rank's host on rank 0 only). Throws RemoteError naming
/// `command` and the first rank of 0..ranks-1 that no host lists.
std::vector<std::string> host_of_rank(const std::vector<HostTopology>& hosts, int ranks,
                                      std::string_view command);

}  // namespace ibscope::topo
