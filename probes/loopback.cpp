// Loopback: link A and link B are two ends on the same port, A's QPs connected to B's; A
// initiates every stream, B is only memory (RDMA WRITE and READ are one-sided).
#include "ibscope/probes/loopback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/probes/engines.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::probes {

LoopbackMemory parse_loopback_memory(std::string_view text) {
  if (text == "host") return LoopbackMemory::kHost;
  if (text == "cuda") return LoopbackMemory::kCuda;
  if (text == "auto") return LoopbackMemory::kAuto;
  throw UsageError(fmt::format("--loopback-mem '{}': expected host, cuda or auto", text));
}

double default_loopback_budget_s(double timeout_s) noexcept {
  return std::min(20.0, timeout_s / 2);
}

void validate(const LoopbackOptions& o) {
  if (o.size_bytes == 0) throw UsageError("--loopback-size must be at least 1 byte");
  if (o.min_iterations < 1 || o.max_iterations < o.min_iterations) {
    throw UsageError(fmt::format("loopback iterations: need 1 <= min ({}) <= max ({})",
                                 o.min_iterations, o.max_iterations));
  }
  if (o.warmup < 1) throw UsageError("loopback warm-up must be at least 1 message");
  if (o.tx_depth < 1) throw UsageError("loopback tx depth must be at least 1");
  if (!(o.budget_s > 0) || !std::isfinite(o.budget_s)) {
    throw UsageError(fmt::format("--loopback-budget must be a positive time, got {}", o.budget_s));
  }
  if (!(o.timeout_s > 0)) throw UsageError("loopback timeout must be positive");
}

namespace {

struct LoopbackPair {
  std::unique_ptr<RcLink> a, b;
};

LoopbackPair connect_pair(const std::shared_ptr<verbs::DeviceContext>& device,
                          const verbs::PortInfo& port, int gid_index, int cuda_device,
                          const LoopbackOptions& o, const std::string& label) {
  LinkConfig config;
  config.qps = 1;
  config.tx_depth = o.tx_depth;
  config.rx_depth = 1;
  config.buffer_bytes = std::max<std::size_t>(o.size_bytes, 64);
  config.mem = cuda_device >= 0 ? MemKind::kCuda : MemKind::kHost;
  config.cuda_device = cuda_device;
  LoopbackPair p;
  p.a = std::make_unique<RcLink>(device, port, gid_index, config);
  p.b = std::make_unique<RcLink>(device, port, gid_index, config);
  const auto a_addresses = p.a->addresses();
  const auto b_addresses = p.b->addresses();
  p.a->connect(b_addresses, o.tuning, label);
  p.b->connect(a_addresses, o.tuning, label);
  return p;
}

// Warm-up at the pace it sets, then a timed stream sized to the slice: GB/s of the timed one.
double stream_gbyte_s(const RcLink& link, Verb verb, double slice_s, const LoopbackOptions& o,
                      ProgressGuard& guard, int& iterations) {
  StreamSpec spec;
  spec.verb = verb;
  spec.size_bytes = o.size_bytes;
  spec.signal_every = std::max(1, std::min(16, link.tx_depth()));
  spec.messages_per_qp = o.warmup;
  const StreamResult warm = run_stream(link, spec, guard);
  const double pace = warm.elapsed_s > 0 ? static_cast<double>(warm.messages) / warm.elapsed_s : 0;
  const double fit = pace > 0 ? pace * slice_s : static_cast<double>(o.max_iterations);
  spec.messages_per_qp = static_cast<int>(std::clamp(fit, static_cast<double>(o.min_iterations),
                                                     static_cast<double>(o.max_iterations)));
  iterations = spec.messages_per_qp;
  const StreamResult timed = run_stream(link, spec, guard);
  if (timed.elapsed_s <= 0 || timed.messages == 0) return 0;
  return static_cast<double>(timed.messages) * static_cast<double>(o.size_bytes) / timed.elapsed_s /
         units::kBytesPerGB;
}

}  // namespace

LoopbackFigures measure_loopback(const std::string& host, const topo::Nic& nic, int port,
                                 int cuda_device, double slice_s, const LoopbackOptions& o,
                                 bootstrap::Bootstrap* bootstrap) {
  const auto t0 = Clock::now();
  LoopbackFigures f;
  f.host = host;
  f.nic = nic.name;
  f.port = port;
  f.memory = cuda_device >= 0 ? fmt::format("cuda:{}", cuda_device) : std::string("host");
  f.virtual_nic = nic.is_virtual;
  f.size_bytes = o.size_bytes;
  for (const auto& p : nic.ports) {
    if (p.port == port) f.data_rate_gbyte_s = p.data_rate_gbyte_s();
  }
  try {
    f.route = topo::pcie_route_of_rdma_device(nic.name);
  } catch (const Error& e) {
    f.route.numa_node = nic.numa_node;
    f.route.no_pci_reason = e.what();
  }
  try {
    const auto device = verbs::DeviceContext::open(nic.name);
    const verbs::PortInfo info = device->require_active_port(static_cast<std::uint8_t>(port));
    int gid_index = o.gid_index;
    if (gid_index < 0 && (info.ethernet || info.lid == 0)) {
      const auto chosen = verbs::choose_gid_index(info);
      if (!chosen) {
        throw verbs::EnvironmentError(
            fmt::format("port {} of {} has no GID to address it by: give its netdev an IP address",
                        port, nic.name));
      }
      gid_index = static_cast<int>(*chosen);
    }
    if (o.size_bytes > device->limits().max_mr_size) {
      throw UsageError(fmt::format("--loopback-size {} is above what {} can register ({})",
                                   o.size_bytes, nic.name, device->limits().max_mr_size));
    }
    if (cuda_device >= 0) gpu::set_device(cuda_device);
    const std::string label = fmt::format("{}:{} loopback", nic.name, port);
    const LoopbackPair pair = connect_pair(device, info, gid_index, cuda_device, o, label);
    ProgressGuard guard(bootstrap, o.timeout_s,
                        fmt::format("host {}: {} into {} memory", host, label, f.memory));
    int write_iterations = 0, read_iterations = 0;
    f.write_gbyte_s = stream_gbyte_s(*pair.a, Verb::kWrite, slice_s, o, guard, write_iterations);
    f.read_gbyte_s = stream_gbyte_s(*pair.a, Verb::kRead, slice_s, o, guard, read_iterations);
    f.iterations = std::min(write_iterations, read_iterations);
    if (o.latency_iterations > 0 && cuda_device < 0) {
      const auto samples =
          run_read_latency(*pair.a, true, o.latency_size_bytes, std::min(10, o.latency_iterations),
                           o.latency_iterations, guard);
      std::vector<double> us;
      for (double s : samples) us.push_back(s * 1e6);
      if (!us.empty()) f.read_lat_us = measure::summarize(us).p50;
    }
  } catch (const UsageError&) {
    throw;
  } catch (const RemoteError&) {
    throw;  // another rank failed: the job ends, not this NIC's figure
  } catch (const Error& e) {
    f.error = e.what();
  }
  f.elapsed_s = seconds_between(t0, Clock::now());
  return f;
}

std::vector<LoopbackFigures> measure_host_loopback(const topo::HostTopology& host,
                                                   const LoopbackOptions& o,
                                                   bootstrap::Bootstrap* bootstrap) {
  validate(o);
  // Which memories: host, and the CUDA ordinal of each of the host's GPUs (-2: not visible).
  std::vector<int> memories;
  std::vector<std::string> gpu_errors;
  if (o.memory != LoopbackMemory::kCuda) memories.push_back(-1);
  if (o.memory != LoopbackMemory::kHost) {
    if (o.memory == LoopbackMemory::kCuda && host.gpus.empty()) {
      throw UsageError(fmt::format(
          "loopback into GPU memory (--mem cuda, --loopback-mem cuda): {} has no GPU (hwloc "
          "lists none); use host memory",
          host.host));
    }
    if (o.memory == LoopbackMemory::kCuda && !gpu::built_with_cuda()) {
      throw UsageError(
          "loopback into GPU memory (--mem cuda, --loopback-mem cuda): this ibscope was built "
          "without CUDA");
    }
    for (const auto& g : host.gpus) {
      std::optional<int> ordinal;
      std::string why;
      try {
        ordinal = gpu::built_with_cuda() ? gpu::device_by_pci_bus_id(g.pci_bus_id) : std::nullopt;
        if (!ordinal)
          why = gpu::built_with_cuda() ? "not visible to CUDA (CUDA_VISIBLE_DEVICES?)"
                                       : "this ibscope was built without CUDA";
      } catch (const Error& e) {
        why = e.what();
      }
      memories.push_back(ordinal ? *ordinal : -2);
      gpu_errors.push_back(fmt::format("GPU {}: {}", g.pci_bus_id, why));
    }
  }
  struct Unit {
    const topo::Nic* nic;
    int port;
  };
  for (const auto& name : o.devices) {
    if (topo::find_nic(host, name) == nullptr) {
      std::string have;
      for (const auto& nic : host.nics) have += (have.empty() ? "" : ", ") + nic.name;
      throw UsageError(fmt::format("-d {}: {} has no such RDMA device (it has: {})", name,
                                   host.host, have.empty() ? "none" : have));
    }
  }
  std::vector<Unit> units;
  for (const auto& nic : host.nics) {
    if (!o.devices.empty() &&
        std::find(o.devices.begin(), o.devices.end(), nic.name) == o.devices.end()) {
      continue;
    }
    for (const auto& p : nic.ports) {
      if (p.active()) {
        units.push_back({&nic, p.port});
        break;  // one port per NIC: a loopback does not depend on which
      }
    }
  }
  std::vector<LoopbackFigures> out;
  const std::size_t streams = std::max<std::size_t>(units.size() * memories.size() * 2, 1);
  const double slice_s = o.budget_s / static_cast<double>(streams);
  for (const Unit& u : units) {
    for (std::size_t m = 0; m < memories.size(); ++m) {
      if (memories[m] == -2) {
        LoopbackFigures f;
        f.host = host.host;
        f.nic = u.nic->name;
        f.port = u.port;
        f.memory = fmt::format(
            "gpu {}", host.gpus[m - (o.memory == LoopbackMemory::kCuda ? 0 : 1)].pci_bus_id);
        f.virtual_nic = u.nic->is_virtual;
        f.error = gpu_errors[m - (o.memory == LoopbackMemory::kCuda ? 0 : 1)];
        out.push_back(std::move(f));
        continue;
      }
      out.push_back(
          measure_loopback(host.host, *u.nic, u.port, memories[m], slice_s, o, bootstrap));
    }
  }
  return out;
}

}  // namespace ibscope::probes
