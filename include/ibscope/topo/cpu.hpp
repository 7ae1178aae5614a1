#pragma once
/// CPU facts from hwloc: how many cores and hardware threads this host has, for the
/// oversubscription warning (busy-polling ranks need a core each).

namespace ibscope::topo {

struct CpuInfo {
  int cores = 0;             ///< physical cores (hwloc HWLOC_OBJ_CORE)
  int hardware_threads = 0;  ///< processing units (HWLOC_OBJ_PU)
  int allowed_threads = 0;   ///< PUs this process may run on (cgroup/affinity)
};

/// Reads the topology; on failure returns zeros (callers then skip the warning).
CpuInfo read_cpu_info() noexcept;

}  // namespace ibscope::topo
