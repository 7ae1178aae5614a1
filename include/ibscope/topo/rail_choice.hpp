#pragma once
/// Which NIC (rail) a rank's UCX traffic uses. Pure: the host's topology in, a choice out;
/// unit-tested with hand-built hosts (tests/unit/test_rail_choice.cpp).
///
/// Rules of choose_rail, in order:
///   1. A NIC list from the user (--nic / accept's -d, "mlx5_0:1,mlx5_1:1"): local rank i takes
///      entry i % size, as the probes do for -d. A name the host does not list is a UsageError.
///   2. With GPU buffers on a host with GPUs: the rank's GPU is gpus[local_rank % gpus] by PCI
///      bus id (choose_gpu's rule 3); among the NICs with an ACTIVE port, those with the best
///      PathClass to that GPU are the candidates, and the rank takes candidates[(local_rank /
///      gpus) % candidates] (so two ranks that share a GPU's switch spread over its NICs).
///   3. Otherwise: the NICs with an ACTIVE port in natural name order (mlx5_2 before mlx5_10),
///      local rank i takes entry i % count: one NIC per rank on an 8-NIC node with 8 ranks.
///   4. No NIC with an ACTIVE port: no choice (UCX keeps its own defaults).
/// The port is the first ACTIVE port of the NIC unless the user named one.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::topo {

struct RailChoice {
  std::string nic;          ///< RDMA device name: "mlx5_3", "rxe0"
  int port = 1;             ///< its port
  std::string netdev;       ///< its network interface ("" when unknown): RoCE's, or IPoIB's
  bool is_virtual = false;  ///< Soft-RoCE, siw: no PCI function of its own
  bool soft_roce = false;   ///< an rdma_rxe device (name "rxe*", virtual)
  std::string link_layer;   ///< "InfiniBand", "Ethernet" ("" when unknown)
  int numa_node = -1;       ///< the NIC's NUMA node (-1: unknown)
  std::string gpu;          ///< the GPU it was paired with (rule 2), else ""
  std::string reason;       ///< one line: "mlx5_3:1 (PIX to GPU 0000:5d:00.0), local rank 3"

  /// "mlx5_3:1": the form UCX_NET_DEVICES and the probes' -d take.
  std::string device_port() const;
};

/// A user's NIC list, "mlx5_0,mlx5_1:2" -> {{"mlx5_0", 0}, {"mlx5_1", 2}} (port 0: the first
/// ACTIVE one). Throws UsageError for an empty entry or a bad port.
struct NicRequest {
  std::string nic;
  int port = 0;
  bool operator==(const NicRequest&) const = default;
};
std::vector<NicRequest> parse_nic_list(std::string_view text);

/// The NICs with an ACTIVE port, in natural name order (rule 3's order).
std::vector<const Nic*> active_nics(const HostTopology& host);

/// The rules above. `requested` empty: rules 2-4. `gpu_buffers`: the job's buffers live on GPUs.
std::optional<RailChoice> choose_rail(const HostTopology& host, int local_rank,
                                      const std::vector<NicRequest>& requested, bool gpu_buffers);

}  // namespace ibscope::topo
