#pragma once
/// What one `ibscope probe <test>` run measures and how: sizes, iterations, queue-pair shape,
/// connection parameters, and which rank pairs. Defaults follow perftest's.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibscope/measure/pair_selection.hpp"
#include "ibscope/memory/mem_kind.hpp"
#include "ibscope/probes/probe_test.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/queue_pair.hpp"

namespace ibscope::probes {

/// Where a side's probe buffers live: host memory, or device memory on the GPU chosen for the
/// rank (topo/gpu_choice.hpp), registered as verbs::MemoryRegion::for_device describes.
using memory::MemKind;

/// --mem, OSU-style: one value for both sides, or "initiator,responder". The initiator is the
/// first rank of a pair: the writer/sender/reader; the responder is the other.
struct MemSides {
  MemKind initiator = MemKind::kHost;
  MemKind responder = MemKind::kHost;
  bool any_cuda() const noexcept {
    return initiator == MemKind::kCuda || responder == MemKind::kCuda;
  }
  bool operator==(const MemSides&) const = default;
};

/// "host" | "cuda" | "host,cuda" | ... Throws UsageError listing the valid values.
MemSides parse_mem_sides(std::string_view text);
/// "host", "cuda", or "host,cuda" when the sides differ.
std::string to_string(const MemSides& mem);

struct ProbeOptions {
  const ProbeTest* test = nullptr;
  std::vector<std::uint64_t> sizes_bytes;
  int iterations = 0;  ///< timed messages per QP (bandwidth) or ping-pongs (latency)
  int warmup = 0;      ///< untimed, before each size
  int qps = 1;
  int tx_depth = 0;         ///< send queue depth: messages in flight per QP
  int rx_depth = 512;       ///< receives kept posted per QP (send tests)
  int inline_bytes = -1;    ///< -1: the largest the device grants up to kDefaultInlineBytes
  int cq_moderation = 100;  ///< bandwidth: signal one completion per this many messages
  /// Devices to use; a rank takes entry local_rank % size (one NIC per local rank on
  /// multi-NIC nodes). Empty device name: the rank's rail (topo::choose_rail, as the UCX jobs
  /// choose theirs), else the first device.
  std::vector<verbs::DevicePort> devices{verbs::DevicePort{}};
  int gid_index = -1;  ///< -1: chosen from the GID table (RoCE v2 on Ethernet)
  verbs::QpTuning tuning;
  bool bidirectional = false;
  double timeout_s = 60;
  /// Read each host's NIC counters around every round (ProbeRow::nic_counters).
  bool nic_counters = true;
  /// --pairs: all, first or a list (measure::PairsSyntax::kRankList); accept: kRounds.
  measure::PairSelection pairs;
  bool bind_to_nic_numa =
      true;      ///< bind CPUs and memory to the NIC's NUMA node (perftest's default)
  MemSides mem;  ///< --mem
};

inline constexpr int kDefaultInlineBytes = 220;  // perftest's default for latency tests

/// "mlx5_0:1,mlx5_1" -> one DevicePort each; "" -> the first device. Throws UsageError.
std::vector<verbs::DevicePort> parse_device_list(std::string_view text);

/// Throws UsageError for combinations that cannot run (e.g. -B with a latency test, sizes of
/// 0 bytes, a tx depth below 1, --mem cuda in a build without CUDA or with write_lat, whose
/// CPU polls the message's last byte and cannot watch GPU memory).
void validate(const ProbeOptions& options);

}  // namespace ibscope::probes
