#include "ibscope/accept/loopback_phase.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ibscope/core/error.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"
#include "ibscope/transport/verbs/nic_ports.hpp"

namespace ibscope::accept {
namespace {

using nlohmann::json;

json encode(const probes::LoopbackFigures& f) {
  json hops = json::array();
  for (const auto& h : f.route.hops) {
    hops.push_back({{"bus_id", h.bus_id}, {"width", h.width}, {"gbyte_s", h.link_gbyte_s}});
  }
  return {{"host", f.host},
          {"nic", f.nic},
          {"port", f.port},
          {"memory", f.memory},
          {"virtual", f.virtual_nic},
          {"data_rate", f.data_rate_gbyte_s},
          {"numa", f.route.numa_node},
          {"hops", hops},
          {"no_pci", f.route.no_pci_reason},
          {"size", f.size_bytes},
          {"iterations", f.iterations},
          {"write", f.write_gbyte_s},
          {"read", f.read_gbyte_s},
          {"lat", f.read_lat_us},
          {"elapsed", f.elapsed_s},
          {"error", f.error}};
}

probes::LoopbackFigures decode(const json& j) {
  probes::LoopbackFigures f;
  f.host = j.at("host").get<std::string>();
  f.nic = j.at("nic").get<std::string>();
  f.port = j.at("port").get<int>();
  f.memory = j.at("memory").get<std::string>();
  f.virtual_nic = j.at("virtual").get<bool>();
  f.data_rate_gbyte_s = j.at("data_rate").get<double>();
  f.route.numa_node = j.at("numa").get<int>();
  for (const auto& h : j.at("hops")) {
    f.route.hops.push_back({h.at("bus_id").get<std::string>(), h.at("width").get<int>(),
                            h.at("gbyte_s").get<double>()});
  }
  f.route.no_pci_reason = j.at("no_pci").get<std::string>();
  f.size_bytes = j.at("size").get<std::uint64_t>();
  f.iterations = j.at("iterations").get<int>();
  f.write_gbyte_s = j.at("write").get<double>();
  f.read_gbyte_s = j.at("read").get<double>();
  f.read_lat_us = j.at("lat").get<double>();
  f.elapsed_s = j.at("elapsed").get<double>();
  f.error = j.at("error").get<std::string>();
  return f;
}

// This host's figures, measured by its local rank 0 (none elsewhere, none without RDMA).
std::vector<probes::LoopbackFigures> measure_here(bootstrap::Bootstrap& boot,
                                                  const probes::LoopbackOptions& probe) {
  if (boot.local_rank() != 0) return {};
  const bool cuda_only = probe.memory == probes::LoopbackMemory::kCuda;
  // As the rails: no hwloc discovery on a host without RDMA devices.
  if (!topo::RdmaSysfs().has_devices() && !cuda_only) return {};
  topo::HostTopology host = topo::discover_host_topology(boot.host(boot.rank()));
  verbs::fill_rdma_ports(host);
  return probes::measure_host_loopback(host, probe, &boot);
}

}  // namespace

results::Loopback loopback_section(const std::vector<LoopbackVerdict>& verdicts,
                                   const probes::LoopbackOptions& probe,
                                   const LoopbackThresholds& thresholds) {
  results::Loopback out;
  out.ran = true;
  out.slow_pct = thresholds.slow_pct;
  out.min_fraction = thresholds.min_fraction;
  out.budget_s = probe.budget_s;
  out.size_bytes = probe.size_bytes;
  if (verdicts.empty()) out.skipped_reason = "no host has an RDMA device with an ACTIVE port";
  for (const auto& v : verdicts) {
    const auto& f = v.figures;
    results::LoopbackNic n;
    n.host = f.host;
    n.nic = f.nic;
    n.port = f.port;
    n.memory = f.memory;
    n.virtual_nic = f.virtual_nic;
    n.data_rate_gbyte_s = f.data_rate_gbyte_s;
    n.pcie_gbyte_s = topo::route_gbyte_s(f.route);
    n.path = topo::describe_route(f.route);
    n.size_bytes = f.size_bytes;
    n.iterations = f.iterations;
    n.write_gbyte_s = f.write_gbyte_s;
    n.read_gbyte_s = f.read_gbyte_s;
    n.read_lat_us = f.read_lat_us;
    n.elapsed_s = f.elapsed_s;
    n.siblings = v.siblings;
    n.siblings_write_gbyte_s = v.siblings_write_gbyte_s;
    n.siblings_read_gbyte_s = v.siblings_read_gbyte_s;
    n.ceiling_gbyte_s = v.ceiling_gbyte_s;
    n.pass = v.pass;
    n.failures = v.failures;
    n.notes = v.notes;
    n.error = f.error;
    out.nics.push_back(std::move(n));
  }
  return out;
}

std::vector<PreflightFinding> loopback_findings(const std::vector<LoopbackVerdict>& verdicts) {
  std::vector<PreflightFinding> out;
  for (const auto& v : verdicts) {
    for (const auto& line : v.failures) {
      out.push_back(
          {v.figures.host, fmt::format("{}:{}", v.figures.nic, v.figures.port), true, line});
    }
  }
  return out;
}

LoopbackPhase run_loopback_phase(bootstrap::Bootstrap& boot, const probes::LoopbackOptions& probe,
                                 const LoopbackThresholds& thresholds) {
  probes::validate(probe);
  json mine = json::array();
  for (const auto& f : measure_here(boot, probe)) mine.push_back(encode(f));
  const std::string text = mine.dump();
  const auto all =
      boot.gather(bootstrap::Bytes(reinterpret_cast<const std::byte*>(text.data()),
                                   reinterpret_cast<const std::byte*>(text.data()) + text.size()),
                  "preflight: loopback figures");
  LoopbackPhase phase;
  if (boot.rank() != 0) return phase;
  std::vector<probes::LoopbackFigures> figures;
  for (std::size_t r = 0; r < all.size(); ++r) {
    try {
      const json j =
          json::parse(std::string(reinterpret_cast<const char*>(all[r].data()), all[r].size()));
      for (const auto& f : j) figures.push_back(decode(f));
    } catch (const json::exception& e) {
      throw RemoteError(fmt::format("rank {} sent malformed loopback figures: {}", r, e.what()));
    }
  }
  phase.verdicts = judge_loopback(figures, thresholds);
  phase.section = loopback_section(phase.verdicts, probe, thresholds);
  phase.findings = loopback_findings(phase.verdicts);
  return phase;
}

}  // namespace ibscope::accept
