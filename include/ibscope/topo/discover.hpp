#pragma once
/// This host's topology from hwloc (with I/O devices) and sysfs: NUMA nodes and CPUs, RDMA
/// NICs with their PCI location and NUMA node (ports are filled from libibverbs by
/// transport/verbs/nic_ports.hpp), GPUs by PCI id, and the GPU<->NIC distance classes.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "ibscope/topo/host_topology.hpp"
#include "ibscope/topo/pcie_route.hpp"

namespace ibscope::topo {

/// Where discovery reads from: this host, or (in tests) an hwloc XML export and a fake sysfs.
struct DiscoverSource {
  std::string hwloc_xml;                 ///< "" = this host; else a file from `lstopo --of xml`
  std::filesystem::path sysfs = "/sys";  ///< class/infiniband, class/net, bus/pci live below it
};

/// Reads the topology; `host` names the entry (the bootstrap's hostname). RDMA devices are the
/// union of hwloc's OpenFabrics OS devices and /sys/class/infiniband, so virtual devices
/// (rxe, siw), which hwloc does not attach to PCI, are listed too: as virtual, with their netdev
/// and, when that netdev is a PCI function, its PCIe path. A device whose NUMA node hwloc cannot
/// tell is on node 0 when the host has a single NUMA node, else unknown (-1).
/// rdma_available/rdma_reason are left for the verbs layer. Throws SystemError when hwloc
/// cannot load the topology.
HostTopology discover_host_topology(std::string host, const DiscoverSource& source = {});

/// The NUMA node (OS index) of RDMA device `name` ("mlx5_0", "rxe0") by the rule above; -1
/// when the device does not exist, its node is unknown, or hwloc fails. Never throws.
int numa_node_of_rdma_device(std::string_view name, const DiscoverSource& source = {}) noexcept;

/// The PCIe route of RDMA device `name`: its NUMA node, the PCI bridges above its PCI function
/// (or, for a virtual device, its netdev's) and the function itself, each with hwloc's link rate
/// and sysfs' current link width. No hops (and the reason) when there is no PCI function.
/// Throws SystemError when hwloc cannot load the topology.
PcieRoute pcie_route_of_rdma_device(std::string_view name, const DiscoverSource& source = {});

/// Whether a PCI function of this class and vendor counts as a GPU: 3D controllers (0x0302) of
/// any vendor; VGA (0x0300) and other display controllers (0x0380) from NVIDIA (0x10de) or
/// AMD (0x1002) — so that a virtual machine's emulated VGA card is not taken for one.
bool is_gpu_pci_function(std::uint16_t class_id, std::uint16_t vendor_id) noexcept;

}  // namespace ibscope::topo
