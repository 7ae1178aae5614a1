#include "ibscope/output/topology_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ibscope/output/csv.hpp"

namespace ibscope::output {
namespace {

const char* kLegend =
    "PIX: at most one PCIe switch, PXB: several PCIe bridges, PHB: through the host bridge, "
    "NODE: host bridges of one NUMA node, SYS: across NUMA nodes, ?: unknown";

std::string numa_text(int node) { return node < 0 ? std::string("-") : fmt::format("{}", node); }

std::string nic_location(const topo::Nic& nic) {
  if (!nic.is_virtual) return format_pcie_path(nic.pcie_path, nic.pci_bus_id);
  std::string text = "virtual";
  if (!nic.netdev.empty()) text += fmt::format(" (netdev {})", nic.netdev);
  if (nic.pcie_via_netdev) text += " via " + format_pcie_path(nic.pcie_path, "");
  return text;
}

void print_numa(std::FILE* out, const topo::HostTopology& h) {
  fmt::print(out, "# {:>6}  {:<20} {:>5}  {:>12}\n", "numa", "cpus", "PUs", "memory(GiB)");
  for (const auto& n : h.numa_nodes) {
    fmt::print(out, "  {:>6}  {:<20} {:>5}  {:>12.2f}\n", n.os_index, n.cpus, n.pu_count,
               static_cast<double>(n.memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  }
}

void print_nics(std::FILE* out, const topo::HostTopology& h) {
  if (!h.rdma_available) fmt::print(out, "# RDMA: no RDMA device: {}\n", h.rdma_reason);
  if (h.nics.empty()) return;
  fmt::print(out, "# {:<10} {:>4}  {:<7} {:<10} {:>9} {:>10} {:>10} {:>10} {:>6} {:>4} {:>4}  {}\n",
             "nic", "port", "state", "link", "width", "line(Gb/s)", "line(GB/s)", "data(GB/s)",
             "mtu(B)", "gid", "numa", "pcie path");
  for (const auto& nic : h.nics) {
    if (nic.ports.empty()) {
      fmt::print(out, "  {:<10} {:>4}  {}  {}\n", nic.name, "-", nic_location(nic),
                 nic.error.empty() ? std::string() : "error: " + nic.error);
      continue;
    }
    for (const auto& p : nic.ports) {
      fmt::print(out,
                 "  {:<10} {:>4}  {:<7} {:<10} {:>9} {:>10} {:>10} {:>10} {:>6} {:>4} {:>4}  {}\n",
                 nic.name, p.port, p.state, p.link_layer, format_width_speed(p.lanes, p.speed),
                 format_rate(p.line_rate_gbit_s), format_rate(p.line_rate_gbyte_s()),
                 format_rate(p.data_rate_gbyte_s()),
                 p.active_mtu_bytes == 0 ? std::string("-") : fmt::format("{}", p.active_mtu_bytes),
                 p.chosen_gid_index ? fmt::format("{}", *p.chosen_gid_index) : std::string("-"),
                 numa_text(nic.numa_node), nic_location(nic));
    }
  }
  for (const auto& nic : h.nics) {
    for (const auto& p : nic.ports) {
      if (p.gids.empty()) continue;
      fmt::print(out, "# GID table of {} port {} (* = the GID ibscope uses)\n", nic.name, p.port);
      fmt::print(out, "# {:>6}  {:<8} {:<40} {}\n", "index", "type", "gid", "netdev");
      for (const auto& g : p.gids) {
        const bool chosen = p.chosen_gid_index && *p.chosen_gid_index == g.index;
        fmt::print(out, "  {}{:>5}  {:<8} {:<40} {}\n", chosen ? '*' : ' ', g.index, g.type, g.gid,
                   g.netdev.empty() ? std::string("-") : g.netdev);
      }
    }
  }
}

void print_gpus(std::FILE* out, const topo::HostTopology& h) {
  if (h.gpus.empty()) {
    fmt::print(out,
               "# GPUs: none (no 3D controller, and no NVIDIA or AMD display controller, "
               "on PCI)\n");
    return;
  }
  fmt::print(out, "# {:<12}  {:<9}  {:<32} {:>4} {:>10}  {}\n", "gpu", "vendor:id", "name", "numa",
             "pcie(GB/s)", "pcie path");
  for (const auto& g : h.gpus) {
    std::string name = g.name;
    if (!g.os_devices.empty()) name += fmt::format(" ({})", fmt::join(g.os_devices, ","));
    fmt::print(out, "  {:<12}  {:04x}:{:04x}  {:<32} {:>4} {:>10}  {}\n", g.pci_bus_id, g.vendor_id,
               g.device_id, name, numa_text(g.numa_node), format_rate(g.pcie_link_gbyte_s),
               format_pcie_path(g.pcie_path, g.pci_bus_id));
  }
  if (h.nics.empty()) return;
  fmt::print(out, "# GPU<->NIC ({})\n", kLegend);
  std::string header = fmt::format("# {:<12}", "gpu");
  for (const auto& nic : h.nics) header += fmt::format("  {:>8}", nic.name);
  fmt::print(out, "{}\n", header);
  for (const auto& g : h.gpus) {
    std::string line = fmt::format("  {:<12}", g.pci_bus_id);
    for (const auto& nic : h.nics) {
      std::string cls = "?";
      for (const auto& d : h.gpu_nic) {
        if (d.gpu == g.pci_bus_id && d.nic == nic.name) cls = std::string(to_string(d.path_class));
      }
      line += fmt::format("  {:>8}", cls);
    }
    fmt::print(out, "{}\n", line);
  }
}

}  // namespace

std::string format_rate(double value) {
  if (value <= 0) return "-";
  std::string text = fmt::format("{:.3f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string format_width_speed(int lanes, const std::string& speed) {
  if (lanes <= 0) return "-";
  return fmt::format("{}x {}", lanes, speed);
}

std::string format_pcie_path(const topo::PciePath& path, const std::string& device) {
  if (path.empty()) return "virtual";
  std::string text = path.host_bridge;
  for (const auto& b : path.bridges) text += " > " + b;
  if (!device.empty()) text += " > " + device;
  return text;
}

std::string format_rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += j == i ? fmt::format("{}", ranks[i])
                   : fmt::format("{}{}{}", ranks[i], j == i + 1 ? "," : "-", ranks[j]);
    i = j + 1;
  }
  return text;
}

void print_topology(std::FILE* out, const std::vector<topo::HostTopology>& hosts) {
  for (const auto& h : hosts) {
    fmt::print(out, "#\n# host {} (rank{} {}): {} package(s), {} cores, {} PUs, {} NUMA node(s)\n",
               h.host, h.ranks.size() == 1 ? "" : "s", format_rank_list(h.ranks), h.packages,
               h.cores, h.pus, h.numa_nodes.size());
    print_numa(out, h);
    print_nics(out, h);
    print_gpus(out, h);
    for (const auto& note : h.notes) fmt::print(out, "# note: {}\n", note);
  }
  std::fflush(out);
}

std::string topology_csv(const std::vector<topo::HostTopology>& hosts) {
  std::string csv;
  for (const auto& h : hosts) {
    if (h.nics.empty()) {
      csv += fmt::format("topology,{},,,,,,,,,,,,,,,,{}\n", csv_field(h.host),
                         csv_field("no RDMA device: " + h.rdma_reason));
    }
    for (const auto& nic : h.nics) {
      const std::string common =
          fmt::format("topology,{},{},{},{},{},{}", csv_field(h.host), csv_field(nic.name),
                      nic.is_virtual ? 1 : 0, csv_field(nic.netdev), csv_field(nic.pci_bus_id),
                      nic.numa_node < 0 ? std::string() : fmt::format("{}", nic.numa_node));
      if (nic.ports.empty()) {
        csv += fmt::format("{},,,,,,,,,,,{}\n", common, csv_field(nic.error));
        continue;
      }
      for (const auto& p : nic.ports) {
        csv += fmt::format("{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{},{},\n", common, p.port,
                           csv_field(p.state), csv_field(p.link_layer), p.lanes, csv_field(p.speed),
                           p.line_rate_gbit_s, p.line_rate_gbyte_s(), p.data_rate_gbyte_s(),
                           p.active_mtu_bytes,
                           p.chosen_gid_index ? fmt::format("{}", *p.chosen_gid_index) : "");
      }
    }
  }
  if (csv.empty()) return csv;
  return "section,host,device,virtual,netdev,pci_bus_id,numa_node,port,state,link_layer,lanes,"
         "speed,line_rate_gbit_s,line_rate_gbyte_s,data_rate_gbyte_s,active_mtu_bytes,"
         "chosen_gid_index,error\n" +
         csv;
}

}  // namespace ibscope::output
