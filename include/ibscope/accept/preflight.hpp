#pragma once
/// Preflight of an acceptance run (pure; unit-tested): what the topology of every host says
/// before a byte is sent. A port that trained below the fabric's rate (a cable or transceiver
/// at fault), a host whose RDMA devices have no ACTIVE port, ports that are down, MTUs that
/// disagree; and whether every host can run the verbs probes at all. On hosts with GPUs: which
/// GPU each local rank would use for GPU buffers (topo::choose_gpu for the rank's NIC) and the
/// GPU<->NIC distance class, with a warning when the pair crosses sockets (SYS).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/results/loopback.hpp"
#include "ibscope/topo/gpu_choice.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::accept {

struct PreflightFinding {
  std::string host;
  std::string device;  ///< "mlx5_0:1"; "" for the host as a whole
  bool fatal = false;  ///< fails the acceptance (else a warning)
  std::string message;
};

/// One local rank's GPU on a host with GPUs.
struct PreflightGpu {
  std::string host;
  int rank = -1;  ///< job rank; -1 when the host lists none (then local rank 0 stands for it)
  int local_rank = 0;
  topo::GpuChoice choice;  ///< GPU, NIC, path class and the one-line reason
};

struct Preflight {
  std::vector<PreflightFinding> findings;
  /// Every host has at least one ACTIVE RDMA port (the verbs probes can run everywhere).
  bool rdma_everywhere = false;
  std::string no_rdma_reason;  ///< the first host without one, and why
  /// The fabric's rate: the highest data rate of the ACTIVE ports (Gb/s, after encoding), and
  /// their link layer ("InfiniBand", "Ethernet"; "" when there are none).
  double fabric_data_rate_gbit = 0;
  std::string link_layer;
  std::uint32_t active_mtu_bytes = 0;  ///< the smallest active MTU
  std::vector<PreflightGpu> gpus;      ///< hosts with GPUs: one entry per local rank
  /// Each NIC's loopback (accept/loopback_phase.hpp; rank 0), absent with --no-loopback. Its
  /// failures are fatal findings as well.
  std::optional<results::Loopback> loopback;
  bool pass() const noexcept;
};

/// `rank_nics`: the RDMA device each local rank uses, entry local_rank % size (as -d gives
/// them); empty, or an empty name: the host's first NIC with an ACTIVE port, else its first.
Preflight check_preflight(const std::vector<topo::HostTopology>& hosts,
                          const std::vector<std::string>& rank_nics = {});

}  // namespace ibscope::accept
