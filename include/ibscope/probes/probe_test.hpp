#pragma once
/// The registry of verbs probes: RC RDMA WRITE, RDMA READ and SEND, each as bandwidth and as
/// latency, named as perftest names its programs (write_bw ~ ib_write_bw, ...).

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

}  // namespace ibscope::probes
