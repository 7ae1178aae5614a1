#include "ibscope/measure/memory_setup.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "ibscope/measure/timing.hpp"
#include "ibscope/memory/copy_engine.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/gpu_choice.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::measure {

namespace {

// "mlx5_0:1,mlx5_1:1" -> "mlx5_0": the NIC UCX was told to use, if any.
std::string ucx_nic() {
  const char* v = std::getenv("UCX_NET_DEVICES");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "all") return "";
  std::string first(v);
  first = first.substr(0, first.find(','));
  return first.substr(0, first.find(':'));
}

int choose_ordinal(const bootstrap::Bootstrap& boot, std::string& reason) {
  const int devices = gpu::device_count();  // throws when there is no driver or device
  const int local_rank = boot.local_rank();
  const topo::HostTopology host = topo::discover_host_topology(boot.host(boot.rank()));
  if (!host.gpus.empty()) {
    const topo::GpuChoice choice = topo::choose_gpu(host, local_rank, ucx_nic());
    if (const auto ordinal = gpu::device_by_pci_bus_id(choice.pci_bus_id)) {
      reason = choice.reason;
      for (const auto& w : topo::gpu_nic_warnings(choice)) log::warn("{}", w);
      return *ordinal;
    }
  }
  const int ordinal = local_rank % devices;
  reason = fmt::format(
      "CUDA device {} (local rank {} of {} visible devices; the topology did "
      "not place the GPUs)",
      ordinal, local_rank, devices);
  return ordinal;
}

}  // namespace

MemorySetup setup_memory(transport::Comm& comm, const memory::MemoryRequest& request) {
  MemorySetup s;
  if (request.kind == memory::MemKind::kCuda) {
    const int ordinal = choose_ordinal(comm.bootstrap(), s.gpu_reason);
    s.space = memory::make_cuda_space(ordinal);
  } else {
    s.space = memory::host_space();
  }
  s.decision = memory::choose_path(request.kind, request.path, comm.reads_device_memory(),
                                   comm.library_version());
  // Fragmenting is a wire format: if any rank stages, every rank cuts messages alike.
  const bool any_staged =
      sum_over_ranks(comm.bootstrap(), s.decision.path == memory::MemPath::kStaged ? 1 : 0,
                     "memory path exchange") > 0;
  if (any_staged) {
    transport::StagingConfig config;
    config.fragment_bytes = request.fragment_bytes;
    config.window = request.window;
    if (s.decision.path == memory::MemPath::kStaged) config.engine = s.space->make_copy_engine();
    comm.set_staging(std::move(config));
  }
  if (comm.rank() == 0) {
    log::info("memory: {}; {}{}", s.space->describe(), s.decision.reason,
              s.gpu_reason.empty() ? "" : fmt::format("; {}", s.gpu_reason));
  }
  return s;
}

}  // namespace ibscope::measure
