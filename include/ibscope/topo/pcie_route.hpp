#pragma once
/// The PCIe route a NIC's DMA takes to memory, with the rate of every link on it, and the
/// arithmetic on it (pure; unit-tested): a link's payload rate from its transfer rate and width,
/// the narrowest link (the route's ceiling), and the route as one line for a verdict. Rates:
/// GB/s = 1e9 B/s; GT/s per lane as the PCIe spec gives them.

#include <optional>
#include <string>
#include <vector>

namespace ibscope::topo {

/// One PCI function on the route: a bridge (root port, switch port) or the device itself.
struct PcieHop {
  std::string bus_id;       ///< "0000:00:03.0"
  int width = 0;            ///< lanes (x1 .. x16); 0 when unknown
  double link_gbyte_s = 0;  ///< its link's payload rate as hwloc reports it; 0 when unknown
  bool operator==(const PcieHop&) const = default;
};

/// From the device's NUMA node down to the device: the bridges top-down, then the device.
struct PcieRoute {
  int numa_node = -1;         ///< -1: unknown
  std::vector<PcieHop> hops;  ///< empty for a device without a PCI location (rxe on a veth)
  std::string no_pci_reason;  ///< why hops is empty ("virtual device rxe0 on netdev rxe-a")
  bool operator==(const PcieRoute&) const = default;
};

/// Payload rate of a PCIe link in GB/s: lanes x GT/s x encoding / 8. 8b/10b up to 5 GT/s
/// (gen 1, 2), 128b/130b above (gen 3 and later; gen 6's FLIT mode is taken as the same).
/// 0 for a width or rate <= 0.
double pcie_link_gbyte_s(double gt_per_s, int width) noexcept;

/// The hop with the slowest known link (the first of equals); nullopt when none is known.
std::optional<std::size_t> narrowest_hop(const PcieRoute& route) noexcept;

/// The route's ceiling: the narrowest known link's rate; 0 when none is known.
double route_gbyte_s(const PcieRoute& route) noexcept;

/// "NUMA 0 → pci 0000:00:01.0 (x16, 31.51 GB/s) → pci 0000:3b:00.0 (x1, 0.25 GB/s, narrowest)";
/// a route without hops: "NUMA 0, no PCIe path (virtual device rxe0 on netdev rxe-a)".
std::string describe_route(const PcieRoute& route);

}  // namespace ibscope::topo
