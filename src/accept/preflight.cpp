#include "ibscope/accept/preflight.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace ibscope::accept {

bool Preflight::pass() const noexcept {
  return std::none_of(findings.begin(), findings.end(),
                      [](const PreflightFinding& f) { return f.fatal; });
}

namespace {

std::string port_name(const topo::Nic& nic, const topo::NicPort& port) {
  return fmt::format("{}:{}", nic.name, port.port);
}

std::string default_nic(const topo::HostTopology& h) {
  for (const auto& nic : h.nics) {
    for (const auto& port : nic.ports) {
      if (port.active()) return nic.name;
    }
  }
  return h.nics.empty() ? std::string() : h.nics.front().name;
}

// Which GPU each local rank would take for --mem cuda, and a warning for a cross-socket pair.
void check_gpus(const topo::HostTopology& h, const std::vector<std::string>& rank_nics,
                Preflight& p) {
  if (h.gpus.empty()) return;
  const std::size_t locals = std::max<std::size_t>(h.ranks.size(), 1);
  for (std::size_t local = 0; local < locals; ++local) {
    std::string nic = rank_nics.empty() ? std::string() : rank_nics[local % rank_nics.size()];
    if (nic.empty()) nic = default_nic(h);
    PreflightGpu g;
    g.host = h.host;
    g.rank = h.ranks.empty() ? -1 : h.ranks[local];
    g.local_rank = static_cast<int>(local);
    g.choice = topo::choose_gpu(h, g.local_rank, nic);
    if (g.choice.to_nic == topo::PathClass::kSys) {
      for (const auto& warning : topo::gpu_nic_warnings(g.choice)) {
        p.findings.push_back(
            {h.host, g.choice.nic, false, fmt::format("local rank {}: {}", local, warning)});
      }
    }
    p.gpus.push_back(std::move(g));
  }
}

}  // namespace

Preflight check_preflight(const std::vector<topo::HostTopology>& hosts,
                          const std::vector<std::string>& rank_nics) {
  Preflight p;
  p.rdma_everywhere = !hosts.empty();
  // The fabric's rate per link layer: the best an ACTIVE port trained at.
  std::map<std::string, double> best_rate;
  std::map<std::string, int> active_ports;
  for (const auto& h : hosts) {
    for (const auto& nic : h.nics) {
      for (const auto& port : nic.ports) {
        if (!port.active()) continue;
        double& best = best_rate[port.link_layer];
        best = std::max(best, port.data_rate_gbit_s);
        ++active_ports[port.link_layer];
      }
    }
  }
  // The link layer most ports use is the fabric's.
  for (const auto& [layer, count] : active_ports) {
    if (p.link_layer.empty() || count > active_ports[p.link_layer]) p.link_layer = layer;
  }
  if (!p.link_layer.empty()) p.fabric_data_rate_gbit = best_rate[p.link_layer];

  for (const auto& h : hosts) {
    int active = 0, devices = 0;
    for (const auto& nic : h.nics) {
      if (!nic.error.empty()) {
        p.findings.push_back({h.host, nic.name, false, fmt::format("cannot query: {}", nic.error)});
      }
      if (!nic.ports.empty()) ++devices;
      for (const auto& port : nic.ports) {
        const std::string name = port_name(nic, port);
        if (!port.active()) {
          p.findings.push_back({h.host, name, false,
                                fmt::format("port is {} (not ACTIVE): unused, or a cable, "
                                            "switch port or subnet manager problem",
                                            port.state)});
          continue;
        }
        ++active;
        if (p.active_mtu_bytes == 0 || port.active_mtu_bytes < p.active_mtu_bytes) {
          p.active_mtu_bytes = port.active_mtu_bytes;
        }
        const double best = best_rate[port.link_layer];
        if (port.link_layer == p.link_layer && port.data_rate_gbit_s + 1e-9 < best) {
          p.findings.push_back(
              {h.host, name, true,
               fmt::format("trained at {} x {} = {:g} Gb/s data rate, below the fabric's {:g} Gb/s "
                           "(reseat or replace the cable/transceiver, check the switch port)",
                           port.lanes, port.speed, port.data_rate_gbit_s, best)});
        }
      }
    }
    if (active == 0) {
      if (p.rdma_everywhere) {
        p.no_rdma_reason =
            devices > 0 ? fmt::format("{}: no RDMA port is ACTIVE", h.host)
                        : fmt::format("{}: {}", h.host,
                                      h.rdma_reason.empty() ? "no RDMA device" : h.rdma_reason);
      }
      p.rdma_everywhere = false;
      if (devices > 0) {
        p.findings.push_back(
            {h.host, "", true, "has RDMA devices but none of their ports is ACTIVE"});
      }
    }
  }
  for (const auto& h : hosts) check_gpus(h, rank_nics, p);
  // MTUs that disagree cap every path at the smallest.
  std::map<std::uint32_t, int> mtus;
  for (const auto& h : hosts) {
    for (const auto& nic : h.nics) {
      for (const auto& port : nic.ports) {
        if (port.active() && port.link_layer == p.link_layer) ++mtus[port.active_mtu_bytes];
      }
    }
  }
  if (mtus.size() > 1) {
    std::string list;
    for (const auto& [mtu, count] : mtus) {
      list += fmt::format("{}{} B on {} port(s)", list.empty() ? "" : ", ", mtu, count);
    }
    p.findings.push_back(
        {"", "", false, fmt::format("active MTUs differ ({}): paths run at the smallest", list)});
  }
  return p;
}

}  // namespace ibscope::accept
