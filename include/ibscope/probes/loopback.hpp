#pragma once
/// Loopback of each NIC (after SuperBench's and Azure's node health checks and Hostping,
/// NSDI'23): two RC queue pairs on the same port, connected to each other, and an RDMA WRITE
/// stream then an RDMA READ stream from one to the other at a large message size, into host
/// memory and, where the host has GPUs, into each GPU's memory; a small RDMA READ's round trip
/// beside them. The data crosses the NIC's PCIe route twice and never the fabric: what it
/// measures is the NIC, its slot and its memory path. Timing is the probes' (a warm-up stream,
/// then a timed one, first post to last completion, steady_clock), with the timed message count
/// fitted to a time budget. Judged by accept/loopback_verdict.hpp.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/memory/mem_kind.hpp"
#include "ibscope/probes/loopback_figures.hpp"
#include "ibscope/topo/host_topology.hpp"
#include "ibscope/transport/verbs/queue_pair.hpp"

namespace ibscope::probes {

/// Which memories the loopback targets: host memory, every GPU's (refused on a host without
/// one), or host memory plus every GPU's where the host has GPUs.
enum class LoopbackMemory { kHost, kCuda, kAuto };

/// "host" | "cuda" | "auto". Throws UsageError listing them.
LoopbackMemory parse_loopback_memory(std::string_view text);

struct LoopbackOptions {
  std::uint64_t size_bytes = 1 << 20;  ///< bandwidth message size
  int max_iterations = 2000;           ///< timed messages per stream, at most
  int min_iterations = 16;             ///< ... and at least, whatever the budget
  int warmup = 8;                      ///< untimed messages before each stream (also the pace)
  int tx_depth = 64;                   ///< messages in flight
  std::uint64_t latency_size_bytes = 8;
  int latency_iterations = 100;  ///< timed small reads (0: no latency)
  double budget_s = 20;          ///< --loopback-budget: every NIC and memory of a host
  double timeout_s = 30;         ///< no progress for this long fails the NIC
  int gid_index = -1;            ///< -1: chosen from the GID table
  verbs::QpTuning tuning;
  LoopbackMemory memory = LoopbackMemory::kAuto;
  std::vector<std::string> devices;  ///< only these RDMA devices (-d); empty: every NIC
};

/// The budget without --loopback-budget: 20 s, at most half of `timeout_s` (the ranks that do
/// not measure wait at most --timeout for the figures).
double default_loopback_budget_s(double timeout_s) noexcept;

/// Throws UsageError for values that cannot run (size 0, iterations < 1, budget <= 0, ...).
void validate(const LoopbackOptions& options);

/// One NIC's port into one memory (`cuda_device` < 0: host memory) within `slice_s` seconds
/// per stream. Never throws for what the device does: a device that cannot be opened, a port
/// that is down, an error completion or no progress within the timeout come back in `error`.
/// `bootstrap` (may be null) is polled for the job's health while waiting.
LoopbackFigures measure_loopback(const std::string& host, const topo::Nic& nic, int port,
                                 int cuda_device, double slice_s, const LoopbackOptions& options,
                                 bootstrap::Bootstrap* bootstrap);

/// Every NIC of `host` (ports filled by verbs::fill_rdma_ports) with an ACTIVE port, into each
/// memory `options.memory` selects, within options.budget_s in all. Throws UsageError for a
/// device in options.devices that the host does not have, and for
/// LoopbackMemory::kCuda on a host without a GPU (or a build without CUDA). A host GPU that CUDA
/// cannot see gives that memory's figures an error.
std::vector<LoopbackFigures> measure_host_loopback(const topo::HostTopology& host,
                                                   const LoopbackOptions& options,
                                                   bootstrap::Bootstrap* bootstrap);

}  // namespace ibscope::probes
