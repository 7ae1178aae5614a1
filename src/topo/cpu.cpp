#include "ibscope/topo/cpu.hpp"

#include <hwloc.h>
#include <sched.h>

namespace ibscope::topo {

CpuInfo read_cpu_info() noexcept {
  CpuInfo info;
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return info;
  if (hwloc_topology_load(topo) == 0) {
    info.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    info.hardware_threads = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  }
  hwloc_topology_destroy(topo);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) info.allowed_threads = CPU_COUNT(&set);
  return info;
}

}  // namespace ibscope::topo
