#include "ibscope/measure/buffer_budget.hpp"

#include <utility>

#include "ibscope/gpu/cuda.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::measure {

void require_memory_here(const bootstrap::Bootstrap& boot, MemoryDemand need) {
  need.ranks_on_host = boot.local_size();
  need.host = boot.host(boot.rank());
  HostMemory host = read_host_memory();
  if (need.device_bytes_per_rank > 0) host.device_free_bytes = gpu::current_device_free_bytes();
  require_memory(need, host);
}

BufferPlan collective_buffer_plan(std::string what, std::string size_flag, std::uint64_t bytes,
                                  memory::MemKind kind) {
  return BufferPlan{.what = std::move(what),
                    .size_flag = std::move(size_flag),
                    .bytes = bytes,
                    .buffers = 3,
                    .host_mirrors = kind == memory::MemKind::kHost ? 0 : 2,
                    .kind = kind};
}

void require_buffers_fit(const transport::Comm& comm, const BufferPlan& plan) {
  const bool on_host = plan.kind == memory::MemKind::kHost;
  const std::uint64_t data = saturating_mul(plan.bytes, static_cast<std::uint64_t>(plan.buffers));
  bool pinned = false;
  for (int r = 0; r < comm.size() && !pinned; ++r) {
    pinned = comm.registers_memory_for(r);
  }
  MemoryDemand need;
  need.what = plan.what;
  need.size_flag = plan.size_flag;
  need.host_bytes_per_rank =
      on_host ? data : saturating_mul(plan.bytes, static_cast<std::uint64_t>(plan.host_mirrors));
  need.locked_bytes_per_rank = on_host && pinned ? data : 0;
  need.device_bytes_per_rank = on_host ? 0 : data;
  require_memory_here(comm.bootstrap(), std::move(need));
  // No rank allocates before every rank on the host has read MemAvailable: one that had would
  // make the others count its buffers twice.
  comm.bootstrap().barrier("memory check");
}

}  // namespace ibscope::measure
