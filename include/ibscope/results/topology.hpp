#pragma once
/// One host's topology as text: what each rank sends rank 0 over the bootstrap (the same JSON
/// as one entry of the results file's "topology" section, results/README.md).

#include <string>
#include <string_view>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::results {

std::string encode_host_topology(const topo::HostTopology& host);
/// Throws UsageError naming `source` and the field when `text` is not a host topology.
topo::HostTopology decode_host_topology(std::string_view text, std::string_view source);

}  // namespace ibscope::results
