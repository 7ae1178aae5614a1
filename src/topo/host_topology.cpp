#include "ibscope/topo/host_topology.hpp"

namespace ibscope::topo {

std::vector<GpuNicDistance> compute_gpu_nic_distances(const HostTopology& host) {
  std::vector<GpuNicDistance> out;
  for (const Gpu& gpu : host.gpus) {
    for (const Nic& nic : host.nics) {
      out.push_back({gpu.pci_bus_id, nic.name,
                     classify({gpu.pcie_path, gpu.numa_node}, {nic.pcie_path, nic.numa_node})});
    }
  }
  return out;
}

const Nic* find_nic(const HostTopology& host, std::string_view name) noexcept {
  for (const Nic& nic : host.nics) {
    if (nic.name == name) return &nic;
  }
  return nullptr;
}

}  // namespace ibscope::topo
