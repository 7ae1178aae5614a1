#include "ibscope/topo/numa_binding.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "ibscope/core/log.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/hwloc_topology.hpp"

namespace ibscope::topo {
namespace {

BindResult bind(int numa_os_index) {
  BindResult r;
  r.numa_node = numa_os_index;
  if (numa_os_index < 0) {
    r.message = "not bound to a NUMA node: the node is unknown";
    return r;
  }
  const HwlocTopology loaded = HwlocTopology::load(HwlocTopology::Io::kNone);
  hwloc_topology_t topology = loaded.get();
  hwloc_obj_t node =
      hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(numa_os_index));
  if (node == nullptr) {
    r.message = fmt::format("not bound: this host has no NUMA node {}", numa_os_index);
    return r;
  }
  r.cpus = bitmap_list(node->cpuset);
  std::string failures;
  if (hwloc_bitmap_iszero(node->cpuset)) {
    failures = fmt::format("; CPUs not bound: node {} has no CPUs", numa_os_index);
  } else if (hwloc_set_cpubind(topology, node->cpuset, HWLOC_CPUBIND_PROCESS) == 0) {
    r.cpus_bound = true;
  } else {
    failures += fmt::format("; CPUs not bound: hwloc_set_cpubind: {}", std::strerror(errno));
  }
  if (hwloc_set_membind(topology, node->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) ==
      0) {
    r.memory_bound = true;
  } else {
    failures += fmt::format("; memory not bound: hwloc_set_membind: {}", std::strerror(errno));
  }
  r.bound = r.cpus_bound && r.memory_bound;
  if (r.bound) {
    r.message = fmt::format("bound to NUMA node {} (CPUs {}, memory on node {})", numa_os_index,
                            r.cpus, numa_os_index);
  } else {
    r.message = fmt::format("NUMA node {} (CPUs {}){}", numa_os_index, r.cpus, failures);
  }
  return r;
}

}  // namespace

BindResult bind_to_numa_node(int numa_os_index) noexcept {
  BindResult r;
  try {
    r = bind(numa_os_index);
  } catch (const std::exception& e) {
    r.numa_node = numa_os_index;
    r.message = fmt::format("not bound to NUMA node {}: {}", numa_os_index, e.what());
  }
  if (!r.bound) {
    log::warn("{} (measurements run unbound; CPU or memory placement may cost bandwidth)",
              r.message);
  }
  return r;
}

BindResult bind_to_rdma_device_numa_node(std::string_view device) noexcept {
  const int node = numa_node_of_rdma_device(device);
  if (node < 0) {
    BindResult r;
    r.message = fmt::format(
        "not bound to {}'s NUMA node: it is unknown (no such device, or "
        "hwloc cannot place it)",
        device);
    log::warn("{}", r.message);
    return r;
  }
  return bind_to_numa_node(node);
}

}  // namespace ibscope::topo
