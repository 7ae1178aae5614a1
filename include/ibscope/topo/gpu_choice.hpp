#pragma once
/// Which GPU a rank uses for its buffers, and what the GPU<->NIC route means for GPUDirect RDMA.
/// Pure: the host's topology in, a choice and warnings out; unit-tested with hand-built hosts.
///
/// Rules of choose_gpu:
///   1. The host's GPUs are ordered by PCI bus id (hwloc's order may differ between hosts).
///   2. With a NIC that the host has, the candidates are the GPUs whose route to that NIC has
///      the best PathClass (PIX < PXB < PHB < NODE < SYS < unknown, from classify()); the rank
///      takes candidates[local_rank % candidates.size()]. On a DGX-like host (each NIC PIX to
///      one GPU) the rank gets the GPU on its NIC's switch; ranks sharing a NIC share its
///      closest GPUs round-robin.
///   3. With no NIC given, or one the host does not list, the rank takes
///      gpus[local_rank % gpus.size()] (one GPU per local rank) and to_nic stays unknown.
///   4. A host without GPUs is a UsageError.

#include <string>
#include <string_view>
#include <vector>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::topo {

struct GpuChoice {
  int gpu_index = -1;  ///< into host.gpus
  std::string pci_bus_id;
  std::string nic;  ///< the NIC it was matched with ("" when none given/known)
  PathClass to_nic = PathClass::kUnknown;
  std::string reason;  ///< one line: "GPU 0000:17:00.0 (PIX to mlx5_0), local rank 0"
};

/// One GPU per local rank by default, the closest to the rank's NIC (`nic`: an RDMA device
/// name, "" for none). Throws UsageError when the host has no GPU (the message says how to
/// check: nvidia-smi, CUDA_VISIBLE_DEVICES). local_rank must be >= 0 (UsageError otherwise).
GpuChoice choose_gpu(const HostTopology& host, int local_rank, std::string_view nic);

/// Warnings for a chosen GPU/NIC pair, one line each: SYS (the route crosses sockets) names
/// both and the consequence; NODE and PHB get a softer note; PIX, PXB and unknown none.
std::vector<std::string> gpu_nic_warnings(const GpuChoice& choice);

}  // namespace ibscope::topo
