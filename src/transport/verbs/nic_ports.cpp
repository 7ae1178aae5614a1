#include "ibscope/transport/verbs/nic_ports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "ibscope/core/error.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

topo::NicPort to_nic_port(const PortInfo& info) {
  topo::NicPort p;
  p.port = info.port;
  p.state = info.state;  // ACTIVE, DOWN, INIT, ARMED (as ibstat prints them)
  p.link_layer = info.link_layer;
  p.lanes = info.lanes;
  p.speed = info.speed_name;
  p.lane_rate_gbit_s = info.lane_gbps;
  p.line_rate_gbit_s = info.line_rate_gbps;
  p.data_rate_gbit_s = info.data_rate_gbps;
  p.active_mtu_bytes = info.active_mtu_bytes;
  p.max_mtu_bytes = info.max_mtu_bytes;
  p.lid = info.lid;
  for (const GidEntry& g : info.gids) {
    p.gids.push_back({g.index, g.text(), std::string(to_string(g.type)), g.netdev});
  }
  p.chosen_gid_index = choose_gid_index(info);
  return p;
}

void fill_rdma_ports(topo::HostTopology& host) {
  const std::vector<std::string> openable = list_device_names();
  if (openable.empty()) {
    host.rdma_available = false;
    try {
      DeviceContext::open("");  // for its reason and remedy
      host.rdma_reason = "libibverbs lists no device";
    } catch (const std::exception& e) {
      host.rdma_reason = e.what();
    }
    for (topo::Nic& nic : host.nics) {
      if (nic.error.empty()) nic.error = "libibverbs cannot open it: " + host.rdma_reason;
    }
    return;
  }
  bool added = false;
  for (const std::string& name : openable) {
    if (topo::find_nic(host, name) != nullptr) continue;
    topo::Nic nic;
    nic.name = name;
    nic.is_virtual = true;  // not under /sys/class/infiniband: nothing locates it
    host.nics.push_back(std::move(nic));
    host.notes.push_back(
        fmt::format("{}: opened by libibverbs but not found in sysfs; its "
                    "location is unknown",
                    name));
    added = true;
  }
  std::sort(host.nics.begin(), host.nics.end(),
            [](const topo::Nic& a, const topo::Nic& b) { return a.name < b.name; });
  int opened = 0;
  for (topo::Nic& nic : host.nics) {
    if (std::find(openable.begin(), openable.end(), nic.name) == openable.end()) {
      nic.error =
          "libibverbs cannot open it (no user-space provider for this device: install "
          "ibverbs-providers; is ib_uverbs loaded?)";
      continue;
    }
    try {
      const auto device = DeviceContext::open(nic.name);
      nic.ports.clear();
      for (int port = 1; port <= device->limits().phys_port_count; ++port) {
        nic.ports.push_back(to_nic_port(device->query_port(static_cast<std::uint8_t>(port))));
      }
      ++opened;
    } catch (const Error& e) {
      nic.error = e.what();
    }
  }
  host.rdma_available = opened > 0;
  if (!host.rdma_available) {
    host.rdma_reason = "no RDMA device could be opened (see each device's error)";
  }
  if (added) host.gpu_nic = topo::compute_gpu_nic_distances(host);
}

}  // namespace ibscope::verbs
