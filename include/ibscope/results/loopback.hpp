#pragma once
/// The loopback figures and verdicts of every NIC (probes/loopback.hpp,
/// accept/loopback_verdict.hpp) as the results file keeps them: `acceptance.preflight.loopback`.
/// Rates GB/s = 1e9 B/s.

#include <cstdint>
#include <string>
#include <vector>

namespace ibscope::results {

struct LoopbackNic {
  std::string host, nic;
  int port = 1;
  std::string memory = "host";  ///< "host", "cuda:<ordinal>"
  bool virtual_nic = false;
  double data_rate_gbyte_s = 0;  ///< the port's data rate
  double pcie_gbyte_s = 0;       ///< the narrowest PCIe link on its route (0: unknown)
  std::string path;              ///< "NUMA 0 → pci 0000:00:03.0 (x1, 0.25 GB/s)"
  std::uint64_t size_bytes = 0;
  int iterations = 0;
  double write_gbyte_s = 0, read_gbyte_s = 0;
  double read_lat_us = 0;  ///< 0: not measured
  double elapsed_s = 0;
  int siblings = 0;
  double siblings_write_gbyte_s = 0, siblings_read_gbyte_s = 0;
  double ceiling_gbyte_s = 0;  ///< 0: not judged against one
  bool pass = false;
  std::vector<std::string> failures, notes;
  std::string error;  ///< "" when measured
};

struct Loopback {
  bool ran = false;            ///< false: skipped (--no-loopback, or no RDMA device)
  std::string skipped_reason;  ///< why it did not run
  double slow_pct = 0;         ///< the thresholds it was judged by
  double min_fraction = 0;
  double budget_s = 0;
  std::uint64_t size_bytes = 0;
  std::vector<LoopbackNic> nics;
};

}  // namespace ibscope::results
