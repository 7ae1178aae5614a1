#pragma once
/// What one host is made of, as `ibscope topo` reports it: NUMA nodes and CPUs, RDMA NICs with
/// their ports (filled from libibverbs by transport/verbs/nic_ports.hpp), GPUs by PCI id, and
/// the GPU<->NIC distance classes. Plain values: they cross the bootstrap as JSON
/// (results/topology.hpp) and rank 0 keeps one per host (host_merge.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/topo/pci_distance.hpp"
#include "ibscope/topo/port_state.hpp"

namespace ibscope::topo {

struct NumaNode {
  int os_index = 0;
  std::string cpus;  ///< OS indexes of its PUs as a list: "0-15,32-47"
  int pu_count = 0;
  std::uint64_t memory_bytes = 0;  ///< local memory
  bool operator==(const NumaNode&) const = default;
};

struct GidInfo {
  std::uint32_t index = 0;
  std::string gid;     ///< "fe80::...", "::ffff:192.0.2.1"
  std::string type;    ///< "IB", "RoCE v1", "RoCE v2"
  std::string netdev;  ///< interface the GID belongs to ("" if none)
  bool operator==(const GidInfo&) const = default;
};

/// One port as libibverbs reports it. Rates: Gb/s = 1e9 bit/s, GB/s = 1e9 B/s.
struct NicPort {
  int port = 1;
  std::string state;            ///< "ACTIVE", "DOWN", ... as read (compare port_state())
  std::string link_layer;       ///< "InfiniBand" or "Ethernet" (RoCE)
  int lanes = 0;                ///< active width: 1, 2, 4, 8, 12
  std::string speed;            ///< "EDR", "HDR", ... or "unknown(N)"
  double lane_rate_gbit_s = 0;  ///< nominal signalling rate per lane
  double line_rate_gbit_s = 0;  ///< lanes x lane rate (what ibstat calls Rate)
  double data_rate_gbit_s = 0;  ///< after line encoding: the most payload the link carries
  std::uint32_t active_mtu_bytes = 0;
  std::uint32_t max_mtu_bytes = 0;
  std::uint16_t lid = 0;
  std::vector<GidInfo> gids;
  std::optional<std::uint32_t> chosen_gid_index;  ///< the GID ibscope uses by default

  PortState port_state() const noexcept { return parse_port_state(state); }
  bool active() const noexcept { return port_state() == PortState::kActive; }
  double line_rate_gbyte_s() const noexcept { return line_rate_gbit_s / 8; }
  double data_rate_gbyte_s() const noexcept { return data_rate_gbit_s / 8; }
  bool operator==(const NicPort&) const = default;
};

struct Nic {
  std::string name;         ///< RDMA device name: "mlx5_0", "rxe0"
  bool is_virtual = false;  ///< no PCI function of its own (Soft-RoCE, siw)
  std::string netdev;       ///< its network interface ("" if none or unknown)
  std::string pci_bus_id;   ///< "0000:3b:00.0"; "" for a virtual device
  /// Where its traffic enters PCIe: its own path, or for a virtual device the path of its
  /// netdev's PCI function (then pcie_via_netdev is true); empty when neither exists.
  PciePath pcie_path;
  bool pcie_via_netdev = false;
  int numa_node = -1;            ///< -1: unknown
  double pcie_link_gbyte_s = 0;  ///< the PCIe link's rate as hwloc reports it (0: unknown)
  std::vector<NicPort> ports;    ///< empty when libibverbs could not open or query it
  std::string error;             ///< why ports are missing ("" when none)
  bool operator==(const Nic&) const = default;
};

struct Gpu {
  std::string pci_bus_id;
  std::uint16_t vendor_id = 0, device_id = 0;
  std::string name;                     ///< model from hwloc's CUDA/NVML/PCI names, or ""
  std::vector<std::string> os_devices;  ///< hwloc OS devices under it: "cuda0", "card1", ...
  PciePath pcie_path;
  int numa_node = -1;
  double pcie_link_gbyte_s = 0;
  bool operator==(const Gpu&) const = default;
};

struct GpuNicDistance {
  std::string gpu;  ///< GPU PCI bus id
  std::string nic;  ///< NIC device name
  PathClass path_class = PathClass::kUnknown;
  bool operator==(const GpuNicDistance&) const = default;
};

struct HostTopology {
  std::string host;
  std::vector<int> ranks;  ///< the job's ranks on this host, ascending
  int packages = 0, cores = 0, pus = 0;
  std::vector<NumaNode> numa_nodes;
  bool rdma_available = false;
  std::string rdma_reason;  ///< when !rdma_available: the one-line reason and remedy
  std::vector<Nic> nics;
  std::vector<Gpu> gpus;
  std::vector<GpuNicDistance> gpu_nic;  ///< every GPU x NIC pair
  std::vector<std::string> notes;       ///< what could not be determined, one line each
  bool operator==(const HostTopology&) const = default;
};

/// The class of every GPU x NIC pair of `host` (pure).
std::vector<GpuNicDistance> compute_gpu_nic_distances(const HostTopology& host);

/// The NIC named `name`, or nullptr.
const Nic* find_nic(const HostTopology& host, std::string_view name) noexcept;

}  // namespace ibscope::topo
