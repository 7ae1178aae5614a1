#pragma once
// Hand-built hosts shared by the topology unit tests (GPU choice, rail choice).

#include <fmt/format.h>

#include <string>

#include "ibscope/topo/host_topology.hpp"

namespace ibscope::test {

using topo::Gpu;
using topo::HostTopology;
using topo::Nic;
using topo::NicPort;

// A DGX-like host: 2 sockets, each with 2 host bridges; under each host bridge 2 PCIe
// switches, each switch with one GPU and one NIC (mlx5_k PIX to GPU k). Bus ids are chosen so
// that the GPUs' bus-id order differs from their listing order.
inline HostTopology dgx_like() {
  HostTopology h;
  h.host = "dgx01";
  const char* gpu_bus[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                            "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (int k = 7; k >= 0; --k) {  // listed in reverse: choose_gpu must sort
    const int hb = k / 2;
    const std::string host_bridge =
        fmt::format("0000:[{:02x}-{:02x}]", hb * 0x40, hb * 0x40 + 0x3f);
    const std::string root = fmt::format("0000:{:02x}:01.{}", hb * 0x40, k % 2);
    const std::string up = fmt::format("0000:{:02x}:00.0", hb * 0x40 + 1 + 4 * (k % 2));
    Gpu g;
    g.pci_bus_id = gpu_bus[k];
    g.pcie_path = {host_bridge,
                   {root, up, fmt::format("0000:{:02x}:00.0", hb * 0x40 + 2 + 4 * (k % 2))}};
    g.numa_node = k / 4;
    h.gpus.push_back(g);
    Nic n;
    n.name = fmt::format("mlx5_{}", k);
    n.pci_bus_id = fmt::format("0000:{:02x}:00.1", hb * 0x40 + 3 + 4 * (k % 2));
    n.pcie_path = {host_bridge,
                   {root, up, fmt::format("0000:{:02x}:01.0", hb * 0x40 + 2 + 4 * (k % 2))}};
    n.numa_node = k / 4;
    n.netdev = fmt::format("ibp{}s0", k);
    NicPort port;
    port.state = "ACTIVE";
    port.link_layer = "InfiniBand";
    n.ports.push_back(port);
    h.nics.push_back(n);
  }
  return h;
}

}  // namespace ibscope::test
