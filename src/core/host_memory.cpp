// read_host_memory(): the system half of core/memory_budget.hpp.
#include <sys/resource.h>

#include "ibscope/core/memory_budget.hpp"
#include "ibscope/core/resident_memory.hpp"

namespace ibscope {

namespace {

constexpr int kCapIpcLock = 14;  // linux/capability.h

}  // namespace

HostMemory read_host_memory() {
  HostMemory host;
  host.available_bytes = parse_kib_field(read_proc_text("/proc/meminfo"), "MemAvailable:");
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      !has_effective_capability(read_proc_text("/proc/self/status"), kCapIpcLock)) {
    host.memlock_bytes = static_cast<std::uint64_t>(limit.rlim_cur);
  }
  return host;
}

}  // namespace ibscope
