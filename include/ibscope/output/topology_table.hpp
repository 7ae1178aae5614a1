#pragma once
/// `ibscope topo` on the console and in CSV: per host its NUMA nodes and CPUs, NIC ports
/// (state, link layer, width x speed, rates in Gb/s and GB/s, MTU, NUMA node, PCIe path), GID
/// tables, GPUs and the GPU<->NIC distance matrix. Units are in the column headers.

#include <cstdio>
#include <string>
#include <vector>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::output {

void print_topology(std::FILE* out, const std::vector<topo::HostTopology>& hosts);

/// A rate with up to three decimals and no trailing zeros: 100 -> "100", 12.5 -> "12.5",
/// 56.25 -> "56.25", 6.81818 -> "6.818"; 0 -> "-" (unknown).
std::string format_rate(double value);
/// Active width x speed: (4, "EDR") -> "4x EDR"; (0, ...) -> "-".
std::string format_width_speed(int lanes, const std::string& speed);
/// "0000:[00-3f] > 0000:00:01.0 > 0000:3b:00.0" (host bridge, bridges, then `device` when not
/// empty); "virtual" for an empty path.
std::string format_pcie_path(const topo::PciePath& path, const std::string& device);
/// "0-3,5,7,8" from ascending ranks (two neighbours are listed, three or more become a range).
std::string format_rank_list(const std::vector<int>& ranks);

/// The "topology" results section as CSV, header first: one line per NIC port; a NIC without
/// ports, or a host without NICs, gets one line with the error.
std::string topology_csv(const std::vector<topo::HostTopology>& hosts);

}  // namespace ibscope::output
