#include "ibscope/topo/discover.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "ibscope/topo/hwloc_topology.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"

namespace ibscope::topo {
namespace {

namespace fs = std::filesystem;

std::string bus_id(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
}

PciePath pcie_path_of(hwloc_obj_t pci) {
  PciePath path;
  std::vector<std::string> upward;
  for (hwloc_obj_t obj = pci->parent; obj != nullptr && obj->type == HWLOC_OBJ_BRIDGE;
       obj = obj->parent) {
    const auto& bridge = obj->attr->bridge;
    if (bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      path.host_bridge =
          fmt::format("{:04x}:[{:02x}-{:02x}]", bridge.downstream.pci.domain,
                      bridge.downstream.pci.secondary_bus, bridge.downstream.pci.subordinate_bus);
      break;
    }
    upward.push_back(bus_id(bridge.upstream.pci));
  }
  // Without a host bridge object the domain still tells devices apart from other domains.
  if (path.host_bridge.empty()) {
    path.host_bridge = fmt::format("{:04x}:[?]", pci->attr->pcidev.domain);
  }
  path.bridges.assign(upward.rbegin(), upward.rend());
  return path;
}

// The NUMA node an I/O object is local to: its first non-I/O ancestor's node when that
// ancestor covers exactly one (a device attached to the whole machine has no single node).
int numa_node_of(hwloc_topology_t topology, hwloc_obj_t io) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, io);
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return -1;
  if (hwloc_bitmap_weight(ancestor->nodeset) != 1) return -1;
  return hwloc_bitmap_first(ancestor->nodeset);
}

// The PCI function behind a sysfs device link (".../0000:3b:00.0"), or "".
std::string pci_bus_id_of_sysfs_device(const fs::path& device_link) {
  std::error_code ec;
  const fs::path target = fs::canonical(device_link, ec);
  if (ec) return {};
  const std::string text = target.string();
  if (text.find("/pci") == std::string::npos) return {};
  return target.filename().string();
}

hwloc_obj_t pci_object(hwloc_topology_t topology, const std::string& bus) {
  return bus.empty() ? nullptr : hwloc_get_pcidev_by_busidstring(topology, bus.c_str());
}

std::vector<std::string> rdma_device_names(hwloc_topology_t topology, const RdmaSysfs& sysfs) {
  std::vector<std::string> names;
  for (hwloc_obj_t os = hwloc_get_next_osdev(topology, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topology, os)) {
    if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && os->name != nullptr) {
      names.emplace_back(os->name);
    }
  }
  for (std::string& n : sysfs.device_names()) names.push_back(std::move(n));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

hwloc_obj_t openfabrics_pci_parent(hwloc_topology_t topology, const std::string& name) {
  for (hwloc_obj_t os = hwloc_get_next_osdev(topology, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topology, os)) {
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || os->name == nullptr ||
        name != os->name) {
      continue;
    }
    for (hwloc_obj_t p = os->parent; p != nullptr; p = p->parent) {
      if (p->type == HWLOC_OBJ_PCI_DEVICE) return p;
    }
  }
  return nullptr;
}

// The network interface hwloc lists on the same PCI function (IPoIB's ib0, a RoCE port's
// ens1f0np0): the netdev where sysfs does not say (an XML export read elsewhere).
std::string hwloc_netdev_of(hwloc_topology_t topology, hwloc_obj_t pci) {
  for (hwloc_obj_t os = hwloc_get_next_osdev(topology, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topology, os)) {
    if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && os->name != nullptr &&
        os->parent == pci) {
      return os->name;
    }
  }
  return {};
}

Nic describe_nic(hwloc_topology_t topology, const fs::path& sysfs, const std::string& name,
                 int single_numa_node) {
  const RdmaSysfs rdma(sysfs);
  Nic nic;
  nic.name = name;
  hwloc_obj_t pci = openfabrics_pci_parent(topology, name);
  if (pci != nullptr) {
    nic.pci_bus_id = bus_id(pci->attr->pcidev);
  } else {
    nic.pci_bus_id = pci_bus_id_of_sysfs_device(rdma.parent_device(name));
    pci = pci_object(topology, nic.pci_bus_id);
  }
  // Software devices (rxe, siw) have no parent device; a non-PCI parent (a platform device)
  // is still hardware, only without a PCIe path.
  std::error_code ec;
  nic.is_virtual = pci == nullptr && !fs::exists(rdma.parent_device(name), ec);
  nic.netdev = rdma.netdev(name);
  if (nic.netdev.empty() && pci != nullptr) nic.netdev = hwloc_netdev_of(topology, pci);
  if (pci == nullptr && nic.is_virtual && !nic.netdev.empty()) {
    // A software device's traffic leaves through its netdev: use that function's location.
    pci = pci_object(topology,
                     pci_bus_id_of_sysfs_device(sysfs / "class/net" / nic.netdev / "device"));
    nic.pcie_via_netdev = pci != nullptr;
  }
  if (pci != nullptr) {
    nic.pcie_path = pcie_path_of(pci);
    nic.numa_node = numa_node_of(topology, pci);
    nic.pcie_link_gbyte_s = pci->attr->pcidev.linkspeed;
  } else if (!nic.pci_bus_id.empty()) {
    // A PCI function hwloc filtered out or does not know: sysfs still has its node.
    const std::string node =
        sysfs_first_line(sysfs / "bus/pci/devices" / nic.pci_bus_id / "numa_node");
    if (!node.empty()) nic.numa_node = std::atoi(node.c_str());
  }
  if (nic.numa_node < 0) nic.numa_node = single_numa_node;
  return nic;
}

std::string vendor_name(std::uint16_t vendor_id) {
  switch (vendor_id) {
    case 0x10de:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    default:
      return fmt::format("vendor 0x{:04x}", vendor_id);
  }
}

std::vector<Gpu> discover_gpus(hwloc_topology_t topology, int single_numa_node) {
  std::vector<Gpu> gpus;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topology, nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topology, pci)) {
    const auto& a = pci->attr->pcidev;
    if (!is_gpu_pci_function(a.class_id, a.vendor_id)) continue;
    Gpu gpu;
    gpu.pci_bus_id = bus_id(a);
    gpu.vendor_id = a.vendor_id;
    gpu.device_id = a.device_id;
    gpu.pcie_path = pcie_path_of(pci);
    gpu.numa_node = numa_node_of(topology, pci);
    if (gpu.numa_node < 0) gpu.numa_node = single_numa_node;
    gpu.pcie_link_gbyte_s = a.linkspeed;
    // CUDA and NVML OS devices (hwloc plugins, optional) carry the model name.
    for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
      if (child->type != HWLOC_OBJ_OS_DEVICE || child->name == nullptr) continue;
      gpu.os_devices.emplace_back(child->name);
      if (const char* model = hwloc_obj_get_info_by_name(child, "GPUModel");
          model != nullptr && gpu.name.empty()) {
        gpu.name = model;
      }
    }
    if (gpu.name.empty()) {
      const char* device = hwloc_obj_get_info_by_name(pci, "PCIDevice");
      const char* vendor = hwloc_obj_get_info_by_name(pci, "PCIVendor");
      if (device != nullptr) {
        gpu.name = vendor != nullptr ? fmt::format("{} {}", vendor, device) : device;
      } else {
        gpu.name =
            fmt::format("{} [{:04x}:{:04x}]", vendor_name(a.vendor_id), a.vendor_id, a.device_id);
      }
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

HwlocTopology load(const DiscoverSource& source) {
  return source.hwloc_xml.empty()
             ? HwlocTopology::load(HwlocTopology::Io::kImportant)
             : HwlocTopology::load_xml(source.hwloc_xml, HwlocTopology::Io::kImportant);
}

int nic_numa_node(hwloc_topology_t topology, const fs::path& sysfs, std::string_view name) {
  const int nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  const int single =
      nodes == 1
          ? static_cast<int>(hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, 0)->os_index)
          : -1;
  for (const std::string& n : rdma_device_names(topology, RdmaSysfs(sysfs))) {
    if (n == name) return describe_nic(topology, sysfs, n, single).numa_node;
  }
  return -1;
}

// Lanes of a PCI function's link as sysfs reads them; 0 when unknown (an XML export, no sysfs).
int link_width_of(const fs::path& sysfs, const std::string& bus) {
  const std::string text = sysfs_first_line(sysfs / "bus/pci/devices" / bus / "current_link_width");
  const int width = std::atoi(text.c_str());
  return width > 0 ? width : 0;
}

PcieRoute route_of(hwloc_topology_t topology, const fs::path& sysfs, const Nic& nic) {
  PcieRoute route;
  route.numa_node = nic.numa_node;
  std::string bus = nic.pci_bus_id;
  if (nic.pcie_via_netdev) {
    bus = pci_bus_id_of_sysfs_device(sysfs / "class/net" / nic.netdev / "device");
  }
  hwloc_obj_t pci = pci_object(topology, bus);
  if (pci == nullptr) {
    route.no_pci_reason =
        nic.is_virtual ? fmt::format("virtual device {} on netdev {}, which has no PCI function",
                                     nic.name, nic.netdev.empty() ? "?" : nic.netdev)
                       : fmt::format("{}: PCI function {} unknown to hwloc", nic.name,
                                     nic.pci_bus_id.empty() ? "?" : nic.pci_bus_id);
    return route;
  }
  std::vector<PcieHop> upward;
  upward.push_back({bus_id(pci->attr->pcidev), link_width_of(sysfs, bus_id(pci->attr->pcidev)),
                    pci->attr->pcidev.linkspeed});
  for (hwloc_obj_t obj = pci->parent; obj != nullptr && obj->type == HWLOC_OBJ_BRIDGE;
       obj = obj->parent) {
    const auto& bridge = obj->attr->bridge;
    if (bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI) break;
    const std::string id = bus_id(bridge.upstream.pci);
    upward.push_back({id, link_width_of(sysfs, id), bridge.upstream.pci.linkspeed});
  }
  route.hops.assign(upward.rbegin(), upward.rend());
  if (nic.pcie_via_netdev) {
    route.no_pci_reason =
        fmt::format("virtual device {}: its netdev {}'s route", nic.name, nic.netdev);
  }
  return route;
}

}  // namespace

PcieRoute pcie_route_of_rdma_device(std::string_view name, const DiscoverSource& source) {
  const HwlocTopology loaded = load(source);
  hwloc_topology_t topology = loaded.get();
  const int nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  const int single =
      nodes == 1
          ? static_cast<int>(hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, 0)->os_index)
          : -1;
  const Nic nic = describe_nic(topology, source.sysfs, std::string(name), single);
  return route_of(topology, source.sysfs, nic);
}

bool is_gpu_pci_function(std::uint16_t class_id, std::uint16_t vendor_id) noexcept {
  if (class_id == 0x0302) return true;
  const bool compute_vendor = vendor_id == 0x10de || vendor_id == 0x1002;
  return compute_vendor && (class_id == 0x0300 || class_id == 0x0380);
}

HostTopology discover_host_topology(std::string host, const DiscoverSource& source) {
  const HwlocTopology loaded = load(source);
  hwloc_topology_t topology = loaded.get();
  HostTopology h;
  h.host = std::move(host);
  h.packages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  h.cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  h.pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
       node != nullptr; node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    NumaNode n;
    n.os_index = static_cast<int>(node->os_index);
    n.cpus = bitmap_list(node->cpuset);
    n.pu_count = hwloc_bitmap_weight(node->cpuset);
    n.memory_bytes = node->attr->numanode.local_memory;
    h.numa_nodes.push_back(std::move(n));
  }
  const int single_numa_node = h.numa_nodes.size() == 1 ? h.numa_nodes.front().os_index : -1;
  for (const std::string& name : rdma_device_names(topology, RdmaSysfs(source.sysfs))) {
    h.nics.push_back(describe_nic(topology, source.sysfs, name, single_numa_node));
    const Nic& nic = h.nics.back();
    if (!nic.is_virtual && nic.pcie_path.empty()) {
      h.notes.push_back(
          nic.pci_bus_id.empty()
              ? fmt::format("{}: not a PCI device; PCIe path unknown", nic.name)
              : fmt::format("{}: PCI function {} not in hwloc's topology; PCIe path unknown",
                            nic.name, nic.pci_bus_id));
    }
  }
  h.gpus = discover_gpus(topology, single_numa_node);
  h.gpu_nic = compute_gpu_nic_distances(h);
  return h;
}

int numa_node_of_rdma_device(std::string_view name, const DiscoverSource& source) noexcept {
  try {
    const HwlocTopology loaded = load(source);
    return nic_numa_node(loaded.get(), source.sysfs, name);
  } catch (...) {
    return -1;
  }
}

}  // namespace ibscope::topo
