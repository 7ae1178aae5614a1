#include "ibscope/probes/probe_test.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/core/error.hpp"

namespace ibscope::probes {
namespace {

constexpr ProbeTest kTests[] = {
    {"write_bw", Verb::kWrite, Metric::kBandwidth, "ib_write_bw",
     "RDMA WRITE bandwidth: a stream of writes, tx-depth in flight per QP"},
    {"write_lat", Verb::kWrite, Metric::kLatency, "ib_write_lat",
     "RDMA WRITE latency: ping-pong, each side polls the last byte; half round trip"},
    {"read_bw", Verb::kRead, Metric::kBandwidth, "ib_read_bw",
     "RDMA READ bandwidth: a stream of reads, bounded by the QPs' outstanding-read limit"},
    {"read_lat", Verb::kRead, Metric::kLatency, "ib_read_lat",
     "RDMA READ latency: one read at a time; the full round trip (as perftest reports it)"},
    {"send_bw", Verb::kSend, Metric::kBandwidth, "ib_send_bw",
     "SEND bandwidth: a stream of sends into receives the target keeps posted"},
    {"send_lat", Verb::kSend, Metric::kLatency, "ib_send_lat",
     "SEND latency: ping-pong of send/receive; half round trip"},
};

}  // namespace

std::span<const ProbeTest> probe_tests() noexcept { return kTests; }

const ProbeTest& find_probe_test(std::string_view name) {
  const auto* it = std::find_if(std::begin(kTests), std::end(kTests),
                                [&](const ProbeTest& t) { return t.name == name; });
  if (it != std::end(kTests)) return *it;
  std::string names;
  for (const auto& t : kTests) names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
  throw UsageError(fmt::format("unknown probe '{}': expected one of {}", name, names));
}

std::string_view to_string(Verb verb) noexcept {
  switch (verb) {
    case Verb::kWrite:
      return "RDMA_WRITE";
    case Verb::kRead:
      return "RDMA_READ";
    case Verb::kSend:
      return "SEND";
  }
  return "?";
}

PerftestDefaults perftest_defaults(const ProbeTest& test) noexcept {
  const bool bw = test.metric == Metric::kBandwidth;
  return PerftestDefaults{
      .size_bytes = bw ? 65536ULL : 2ULL, .iterations = bw ? 5000 : 1000, .tx_depth = bw ? 128 : 1};
}

int perftest_warmup(int iterations) noexcept { return std::min(100, iterations / 10); }

}  // namespace ibscope::probes
