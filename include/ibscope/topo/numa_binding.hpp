#pragma once
/// Binding this process's CPUs and memory to one NUMA node, the node of the NIC it measures
/// (as perftest does by default), so that a rank's buffers and polling thread sit next to the
/// NIC. Failure to bind is a warning, never an error: the measurement still runs.

#include <string>
#include <string_view>

namespace ibscope::topo {

struct BindResult {
  bool bound = false;  ///< CPUs and memory both bound
  bool cpus_bound = false;
  bool memory_bound = false;
  int numa_node = -1;  ///< the node asked for (-1: unknown, nothing was done)
  std::string cpus;    ///< the node's CPU list, "0-15,32-47" ("" when unknown)
  /// One line for the banner/log: "bound to NUMA node 0 (CPUs 0-1, memory on node 0)", or
  /// what could not be bound and why.
  std::string message;
};

/// Binds every thread of the process to the CPUs of NUMA node `numa_os_index`
/// (hwloc_set_cpubind, HWLOC_CPUBIND_PROCESS) and the memory policy to that node
/// (hwloc_set_membind, HWLOC_MEMBIND_BIND). Memory policy is per thread on Linux: it applies
/// to the calling thread and the threads it creates afterwards, so call this early, before
/// starting worker threads. On failure (unknown node, -1, no permission, no NUMA support)
/// logs one warning and returns what was done. Never throws.
BindResult bind_to_numa_node(int numa_os_index) noexcept;

/// bind_to_numa_node(numa_node_of_rdma_device(device)): binds to the NUMA node of RDMA device
/// `device` ("mlx5_0", "rxe0"); a warning and nothing bound when its node is unknown.
BindResult bind_to_rdma_device_numa_node(std::string_view device) noexcept;

}  // namespace ibscope::topo
