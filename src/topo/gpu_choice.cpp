#include "ibscope/topo/gpu_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ibscope/core/error.hpp"

namespace ibscope::topo {
namespace {

// PathClass is declared best to worst, kUnknown last: its value is the rank.
int rank_of(PathClass c) noexcept { return static_cast<int>(c); }

}  // namespace

GpuChoice choose_gpu(const HostTopology& host, int local_rank, std::string_view nic) {
  if (host.gpus.empty()) {
    throw UsageError(
        fmt::format("no GPU found on {} by hwloc: check that nvidia-smi lists one and that "
                    "CUDA_VISIBLE_DEVICES does not hide it (or use --mem host)",
                    host.host.empty() ? "this host" : host.host));
  }
  if (local_rank < 0) throw UsageError(fmt::format("local rank {} is negative", local_rank));
  std::vector<int> order(host.gpus.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return host.gpus[static_cast<std::size_t>(a)].pci_bus_id <
           host.gpus[static_cast<std::size_t>(b)].pci_bus_id;
  });
  const auto slot = static_cast<std::size_t>(local_rank);

  GpuChoice choice;
  const Nic* matched = nic.empty() ? nullptr : find_nic(host, nic);
  if (matched == nullptr) {
    choice.gpu_index = order[slot % order.size()];
    const Gpu& gpu = host.gpus[static_cast<std::size_t>(choice.gpu_index)];
    choice.pci_bus_id = gpu.pci_bus_id;
    choice.reason = nic.empty() ? fmt::format("GPU {} (no NIC to match), local rank {}",
                                              gpu.pci_bus_id, local_rank)
                                : fmt::format("GPU {} (NIC {} not in the topology), local rank {}",
                                              gpu.pci_bus_id, nic, local_rank);
    return choice;
  }
  std::vector<PathClass> classes(host.gpus.size());
  int best = rank_of(PathClass::kUnknown);
  for (std::size_t i = 0; i < host.gpus.size(); ++i) {
    const Gpu& gpu = host.gpus[i];
    classes[i] = classify({gpu.pcie_path, gpu.numa_node}, {matched->pcie_path, matched->numa_node});
    best = std::min(best, rank_of(classes[i]));
  }
  std::vector<int> candidates;
  for (int i : order) {
    if (rank_of(classes[static_cast<std::size_t>(i)]) == best) candidates.push_back(i);
  }
  choice.gpu_index = candidates[slot % candidates.size()];
  const Gpu& gpu = host.gpus[static_cast<std::size_t>(choice.gpu_index)];
  choice.pci_bus_id = gpu.pci_bus_id;
  choice.nic = matched->name;
  choice.to_nic = classes[static_cast<std::size_t>(choice.gpu_index)];
  choice.reason = fmt::format("GPU {} ({} to {}), local rank {}", gpu.pci_bus_id,
                              to_string(choice.to_nic), matched->name, local_rank);
  return choice;
}

std::vector<std::string> gpu_nic_warnings(const GpuChoice& choice) {
  std::vector<std::string> out;
  switch (choice.to_nic) {
    case PathClass::kSys:
      out.push_back(fmt::format(
          "GPU {} and NIC {} are on different sockets (SYS): GPUDirect RDMA through the "
          "inter-socket link is typically much slower than the NIC's line rate; pick a GPU/NIC "
          "pair on the same PCIe switch",
          choice.pci_bus_id, choice.nic));
      break;
    case PathClass::kNode:
    case PathClass::kPhb:
      out.push_back(fmt::format(
          "GPU {} and NIC {} meet at the CPU ({}), not below a PCIe switch: GPUDirect RDMA "
          "may fall short of a PIX/PXB pair",
          choice.pci_bus_id, choice.nic, to_string(choice.to_nic)));
      break;
    case PathClass::kPix:
    case PathClass::kPxb:
    case PathClass::kUnknown:
      break;
  }
  return out;
}

}  // namespace ibscope::topo
