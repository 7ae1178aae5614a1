#include "ibscope/topo/pcie_route.hpp"

#include <fmt/format.h>

namespace ibscope::topo {

double pcie_link_gbyte_s(double gt_per_s, int width) noexcept {
  if (gt_per_s <= 0 || width <= 0) return 0;
  const double encoding = gt_per_s <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gt_per_s * encoding * width / 8.0;
}

std::optional<std::size_t> narrowest_hop(const PcieRoute& route) noexcept {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < route.hops.size(); ++i) {
    const double rate = route.hops[i].link_gbyte_s;
    if (rate <= 0) continue;
    if (!best || rate < route.hops[*best].link_gbyte_s) best = i;
  }
  return best;
}

double route_gbyte_s(const PcieRoute& route) noexcept {
  const auto i = narrowest_hop(route);
  return i ? route.hops[*i].link_gbyte_s : 0;
}

std::string describe_route(const PcieRoute& route) {
  std::string out =
      route.numa_node >= 0 ? fmt::format("NUMA {}", route.numa_node) : std::string("NUMA ?");
  if (route.hops.empty()) {
    return fmt::format(
        "{}, no PCIe path{}", out,
        route.no_pci_reason.empty() ? "" : fmt::format(" ({})", route.no_pci_reason));
  }
  const auto narrowest = narrowest_hop(route);
  // Only a route whose links differ has a narrowest link worth naming.
  bool differ = false;
  for (const auto& hop : route.hops) {
    if (hop.link_gbyte_s > 0 && narrowest &&
        hop.link_gbyte_s != route.hops[*narrowest].link_gbyte_s) {
      differ = true;
    }
  }
  for (std::size_t i = 0; i < route.hops.size(); ++i) {
    const PcieHop& hop = route.hops[i];
    const std::string width = hop.width > 0 ? fmt::format("x{}", hop.width) : std::string("x?");
    const std::string rate =
        hop.link_gbyte_s > 0 ? fmt::format("{:.2f} GB/s", hop.link_gbyte_s) : std::string("? GB/s");
    out += fmt::format(" → pci {} ({}, {}{})", hop.bus_id, width, rate,
                       differ && narrowest == i ? ", narrowest" : "");
  }
  return out;
}

}  // namespace ibscope::topo
