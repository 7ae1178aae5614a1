#include "ibscope/probes/probe_options.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/gpu/cuda.hpp"

namespace ibscope::probes {

std::vector<verbs::DevicePort> parse_device_list(std::string_view text) {
  std::vector<verbs::DevicePort> devices;
  if (text.empty()) return {verbs::DevicePort{}};
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.empty()) throw UsageError(fmt::format("-d '{}': empty device name in the list", text));
    devices.push_back(verbs::parse_device_port(item));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return devices;
}

void validate(const ProbeOptions& o) {
  if (o.devices.empty()) throw UsageError("no RDMA device selected");
  if (o.test == nullptr) throw UsageError("no probe test given");
  if (o.sizes_bytes.empty()) throw UsageError("no message sizes to measure");
  for (std::uint64_t size : o.sizes_bytes) {
    if (size == 0) throw UsageError("probe message sizes must be at least 1 byte");
    if (size > (1ULL << 31)) {
      throw UsageError(
          fmt::format("message size {} is above the 2 GiB a work request can carry", size));
    }
  }
  if (o.bidirectional && o.test->metric == Metric::kLatency) {
    throw UsageError(
        fmt::format("-B/--bidirectional applies to bandwidth tests, not {}", o.test->name));
  }
  if (o.test->metric == Metric::kLatency && o.qps != 1) {
    throw UsageError(fmt::format("{} measures one QP: -q/--qp must be 1", o.test->name));
  }
  if (o.iterations < 1) throw UsageError("-n/--iters must be at least 1");
  if (o.warmup < 0) throw UsageError("-w/--warmup must not be negative");
  if (o.qps < 1 || o.qps > 1024) throw UsageError("-q/--qp must be 1..1024");
  if (o.tx_depth < 1) throw UsageError("-t/--tx-depth must be at least 1");
  if (o.rx_depth < 1) throw UsageError("-r/--rx-depth must be at least 1");
  if (o.cq_moderation < 1) throw UsageError("-Q/--cq-mod must be at least 1");
  if (o.inline_bytes < -1) throw UsageError("-I/--inline-size must be 0 or more");
  if (o.tuning.mtu_bytes != 0 && verbs::mtu_bytes_to_code(o.tuning.mtu_bytes) == 0) {
    throw UsageError(
        fmt::format("-m/--mtu {}: expected 256, 512, 1024, 2048 or 4096", o.tuning.mtu_bytes));
  }
  if (o.tuning.timeout < 0 || o.tuning.timeout > 31) throw UsageError("-u/--qp-timeout: 0..31");
  if (o.tuning.retry_count < 0 || o.tuning.retry_count > 7) throw UsageError("--retry-count: 0..7");
  if (o.tuning.rnr_retry < 0 || o.tuning.rnr_retry > 7) throw UsageError("--rnr-retry: 0..7");
  if (o.tuning.service_level < 0 || o.tuning.service_level > 15) throw UsageError("-S/--sl: 0..15");
  if (o.tuning.traffic_class < 0 || o.tuning.traffic_class > 255) {
    throw UsageError("-T/--tclass: 0..255");
  }
  if (o.tuning.hop_limit < 1 || o.tuning.hop_limit > 255) throw UsageError("--hop-limit: 1..255");
  if (o.mem.any_cuda()) {
    if (!gpu::built_with_cuda()) {
      throw UsageError(fmt::format(
          "--mem {}: this ibscope was built without CUDA; rebuild with the CUDA toolkit "
          "installed and -DIBSCOPE_CUDA=ON, or use --mem host",
          to_string(o.mem)));
    }
    if (o.test->verb == Verb::kWrite && o.test->metric == Metric::kLatency) {
      throw UsageError(fmt::format(
          "--mem {}: {} has each side's CPU poll the last byte of the peer's write, which it "
          "cannot do in GPU memory; measure GPU memory latency with send_lat or read_lat",
          to_string(o.mem), o.test->name));
    }
  }
}

std::string to_string(const MemSides& mem) {
  if (mem.initiator == mem.responder) return std::string(memory::name_of(mem.initiator));
  return fmt::format("{},{}", memory::name_of(mem.initiator), memory::name_of(mem.responder));
}

MemSides parse_mem_sides(std::string_view text) {
  const auto one = [&](std::string_view word) {
    if (word == "host") return MemKind::kHost;
    if (word == "cuda") return MemKind::kCuda;
    throw UsageError(fmt::format(
        "--mem {}: '{}' is not a memory kind; valid: host, cuda, or a pair initiator,responder "
        "such as host,cuda",
        text, word));
  };
  const auto comma = text.find(',');
  if (comma == std::string_view::npos) {
    const MemKind both = one(text);
    return {both, both};
  }
  if (text.find(',', comma + 1) != std::string_view::npos) {
    throw UsageError(fmt::format(
        "--mem {}: give one kind for both sides or two (initiator,responder); valid: host, cuda",
        text));
  }
  return {one(text.substr(0, comma)), one(text.substr(comma + 1))};
}

}  // namespace ibscope::probes
