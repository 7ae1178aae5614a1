#pragma once
/// The registry of verbs probes: RC RDMA WRITE, RDMA READ and SEND, each as bandwidth and as
/// latency, named as perftest names its programs (write_bw ~ ib_write_bw, ...).

#include <cstdint>
#include <span>
#include <string_view>

namespace ibscope::probes {

enum class Verb { kWrite, kRead, kSend };
enum class Metric { kBandwidth, kLatency };

struct ProbeTest {
  std::string_view name;  ///< "write_bw"
  Verb verb;
  Metric metric;
  std::string_view perftest_peer;  ///< the perftest program measuring the same: "ib_write_bw"
  std::string_view description;
};

std::span<const ProbeTest> probe_tests() noexcept;
/// Throws UsageError listing the known names.
const ProbeTest& find_probe_test(std::string_view name);
/// The work request opcode, as errors and results name it: "RDMA_WRITE", "RDMA_READ", "SEND".
std::string_view to_string(Verb verb) noexcept;

/// perftest's defaults for what its flags do not give, by the test's metric.
struct PerftestDefaults {
  std::uint64_t size_bytes = 0;  ///< -s: 64 KiB for bandwidth, 2 B for latency
  int iterations = 0;            ///< -n: 5000 messages per QP (bandwidth), 1000 ping-pongs
  int tx_depth = 0;              ///< -t: 128 messages in flight per QP (bandwidth), 1 (latency)
};
PerftestDefaults perftest_defaults(const ProbeTest& test) noexcept;
/// -w: untimed iterations before each size, 1/10 of the timed ones and at most 100.
int perftest_warmup(int iterations) noexcept;
/// -a's sweep, and the ends of a -b/-e sweep that gives one end only: 2 B .. 8 MiB.
inline constexpr std::uint64_t kPerftestMinBytes = 2;
inline constexpr std::uint64_t kPerftestMaxBytes = 8ULL << 20;

}  // namespace ibscope::probes
