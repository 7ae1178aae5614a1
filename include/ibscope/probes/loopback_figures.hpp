#pragma once
/// What a loopback run measured on one NIC into one memory (plain values; probes/loopback.hpp
/// measures them, accept/loopback_verdict.hpp judges them, results/ records them). Rates:
/// GB/s = 1e9 B/s; times in µs.

#include <cstdint>
#include <string>

#include "ibscope/topo/pcie_route.hpp"

namespace ibscope::probes {

struct LoopbackFigures {
  std::string host;
  std::string nic;  ///< RDMA device name: "mlx5_0", "rxe0"
  int port = 1;
  std::string memory = "host";  ///< "host", or "cuda:<ordinal>" for a GPU's memory
  bool virtual_nic = false;     ///< no PCI function of its own (rxe, siw): its port rate is nominal
  double data_rate_gbyte_s = 0;  ///< the port's data rate (after line encoding), GB/s
  topo::PcieRoute route;         ///< NUMA node and the PCIe links to the NIC
  std::uint64_t size_bytes = 0;  ///< message size of the bandwidth runs
  int iterations = 0;            ///< timed messages per bandwidth run
  double write_gbyte_s = 0;      ///< RC RDMA WRITE from the NIC to itself
  double read_gbyte_s = 0;       ///< RC RDMA READ from the NIC to itself
  double read_lat_us = 0;        ///< p50 of a small RDMA READ round trip; 0 when not measured
  double elapsed_s = 0;          ///< wall time of this NIC's runs, set-up included
  std::string error;             ///< why nothing was measured ("" when it was)
};

}  // namespace ibscope::probes
