#pragma once
// Private to src/results/. HostTopology <-> JSON: what each rank sends over the bootstrap, and the
// "topology" section of
/// the results file (results/README.md documents the fields). Rates carry their unit in the
/// key: *_gbit_s (1e9 bit/s), *_gbyte_s (1e9 B/s).

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::results {

using topo::HostTopology;

nlohmann::json to_json(const HostTopology& host);
/// Throws UsageError naming `source` and the field when `j` is not a host topology.
HostTopology host_topology_from_json(const nlohmann::json& j, std::string_view source);

/// The results section: {"hosts": [ ... one per host ... ]}.
nlohmann::json topology_section_json(const std::vector<HostTopology>& hosts);
/// Inverse of topology_section_json. Throws UsageError.
std::vector<HostTopology> topology_from_section_json(const nlohmann::json& j,
                                                     std::string_view source);

}  // namespace ibscope::results
