#include "topology_json.hpp"

#include <fmt/format.h>

#include <limits>

#include "ibscope/core/error.hpp"
#include "ibscope/results/topology.hpp"

namespace ibscope::results {

using namespace topo;  // the section's types
namespace {

using nlohmann::json;

// Unknown values are null in the file rather than -1, "" or 0.
json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json or_null(int numa_node) { return numa_node < 0 ? json(nullptr) : json(numa_node); }
json rate_or_null(double gbyte_s) { return gbyte_s > 0 ? json(gbyte_s) : json(nullptr); }

json to_json(const PciePath& p) {
  return {{"host_bridge", or_null(p.host_bridge)}, {"bridges", p.bridges}};
}

json to_json(const NicPort& p) {
  json gids = json::array();
  for (const GidInfo& g : p.gids) {
    gids.push_back(
        {{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", or_null(g.netdev)}});
  }
  return {{"port", p.port},
          {"state", p.state},
          {"link_layer", p.link_layer},
          {"lanes", p.lanes},
          {"speed", p.speed},
          {"lane_rate_gbit_s", p.lane_rate_gbit_s},
          {"line_rate_gbit_s", p.line_rate_gbit_s},
          {"line_rate_gbyte_s", p.line_rate_gbyte_s()},
          {"data_rate_gbit_s", p.data_rate_gbit_s},
          {"data_rate_gbyte_s", p.data_rate_gbyte_s()},
          {"active_mtu_bytes", p.active_mtu_bytes},
          {"max_mtu_bytes", p.max_mtu_bytes},
          {"lid", p.lid},
          {"gids", gids},
          {"chosen_gid_index", p.chosen_gid_index ? json(*p.chosen_gid_index) : json(nullptr)}};
}

json to_json(const Nic& n) {
  json ports = json::array();
  for (const NicPort& p : n.ports) ports.push_back(to_json(p));
  return {{"name", n.name},
          {"virtual", n.is_virtual},
          {"netdev", or_null(n.netdev)},
          {"pci_bus_id", or_null(n.pci_bus_id)},
          {"pcie_path", to_json(n.pcie_path)},
          {"pcie_via_netdev", n.pcie_via_netdev},
          {"numa_node", or_null(n.numa_node)},
          {"pcie_link_gbyte_s", rate_or_null(n.pcie_link_gbyte_s)},
          {"ports", ports},
          {"error", or_null(n.error)}};
}

json to_json(const Gpu& g) {
  return {{"pci_bus_id", g.pci_bus_id},
          {"vendor_id", fmt::format("0x{:04x}", g.vendor_id)},
          {"device_id", fmt::format("0x{:04x}", g.device_id)},
          {"name", or_null(g.name)},
          {"os_devices", g.os_devices},
          {"pcie_path", to_json(g.pcie_path)},
          {"numa_node", or_null(g.numa_node)},
          {"pcie_link_gbyte_s", rate_or_null(g.pcie_link_gbyte_s)}};
}

// Whether `v` is an integer that T holds exactly.
template <typename T>
bool fits(const json& v) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  }
  const std::int64_t x = v.get<std::int64_t>();
  if (x < 0)
    return std::is_signed_v<T> && x >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
  return static_cast<std::uint64_t>(x) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
}

// Reads fields with errors that name the source and the JSON path.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError(fmt::format("{}: {}: {}", source_, where, what));
  }

  const json& at(const json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where, "expected an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(fmt::format("{}.{}", where, key), "missing");
    return *it;
  }

  template <typename T>
  T get(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    // Integers are range-checked first: nlohmann converts a float or a too-large integer with a
    // plain cast (1e36 to uint64 is undefined behaviour; 4294967297 would read as int 1).
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!v.is_number()) {
        fail(fmt::format("{}.{}", where, key), fmt::format("unexpected {}", v.type_name()));
      }
      if (!fits<T>(v)) {
        fail(fmt::format("{}.{}", where, key),
             fmt::format("expected an integer in {}..{}, got {}", std::numeric_limits<T>::min(),
                         std::numeric_limits<T>::max(), v.dump()));
      }
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) fail(fmt::format("{}.{}", where, key), "expected an array");
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!fits<int>(v[i])) fail(fmt::format("{}.{}[{}]", where, key, i), "expected an int");
      }
    }
    try {
      if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) throw std::invalid_argument("not a string");
      } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) throw std::invalid_argument("not a boolean");
      } else if constexpr (std::is_arithmetic_v<T>) {
        if (!v.is_number()) throw std::invalid_argument("not a number");
      }
      return v.get<T>();
    } catch (const std::exception&) {
      fail(fmt::format("{}.{}", where, key), fmt::format("unexpected {}", v.type_name()));
    }
  }

  std::string string_or_empty(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    return v.is_null() ? std::string() : get<std::string>(obj, where, key);
  }

  int numa_node(const json& obj, const std::string& where) const {
    const json& v = at(obj, where, "numa_node");
    return v.is_null() ? -1 : get<int>(obj, where, "numa_node");
  }

  double rate(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    return v.is_null() ? 0.0 : get<double>(obj, where, key);
  }

  const json& array(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    if (!v.is_array()) fail(fmt::format("{}.{}", where, key), "expected an array");
    return v;
  }

  PciePath pcie_path(const json& obj, const std::string& where) const {
    const std::string w = where + ".pcie_path";
    const json& p = at(obj, where, "pcie_path");
    PciePath path;
    path.host_bridge = string_or_empty(p, w, "host_bridge");
    path.bridges = get<std::vector<std::string>>(p, w, "bridges");
    return path;
  }

  NicPort port(const json& j, const std::string& w) const {
    NicPort p;
    p.port = get<int>(j, w, "port");
    p.state = get<std::string>(j, w, "state");
    p.link_layer = get<std::string>(j, w, "link_layer");
    p.lanes = get<int>(j, w, "lanes");
    p.speed = get<std::string>(j, w, "speed");
    p.lane_rate_gbit_s = get<double>(j, w, "lane_rate_gbit_s");
    p.line_rate_gbit_s = get<double>(j, w, "line_rate_gbit_s");
    p.data_rate_gbit_s = get<double>(j, w, "data_rate_gbit_s");
    p.active_mtu_bytes = get<std::uint32_t>(j, w, "active_mtu_bytes");
    p.max_mtu_bytes = get<std::uint32_t>(j, w, "max_mtu_bytes");
    p.lid = get<std::uint16_t>(j, w, "lid");
    const json& gids = array(j, w, "gids");
    for (std::size_t i = 0; i < gids.size(); ++i) {
      const std::string gw = fmt::format("{}.gids[{}]", w, i);
      p.gids.push_back({get<std::uint32_t>(gids[i], gw, "index"),
                        get<std::string>(gids[i], gw, "gid"), get<std::string>(gids[i], gw, "type"),
                        string_or_empty(gids[i], gw, "netdev")});
    }
    if (!at(j, w, "chosen_gid_index").is_null()) {
      p.chosen_gid_index = get<std::uint32_t>(j, w, "chosen_gid_index");
    }
    return p;
  }

  Nic nic(const json& j, const std::string& w) const {
    Nic n;
    n.name = get<std::string>(j, w, "name");
    n.is_virtual = get<bool>(j, w, "virtual");
    n.netdev = string_or_empty(j, w, "netdev");
    n.pci_bus_id = string_or_empty(j, w, "pci_bus_id");
    n.pcie_path = pcie_path(j, w);
    n.pcie_via_netdev = get<bool>(j, w, "pcie_via_netdev");
    n.numa_node = numa_node(j, w);
    n.pcie_link_gbyte_s = rate(j, w, "pcie_link_gbyte_s");
    const json& ports = array(j, w, "ports");
    for (std::size_t i = 0; i < ports.size(); ++i) {
      n.ports.push_back(port(ports[i], fmt::format("{}.ports[{}]", w, i)));
    }
    n.error = string_or_empty(j, w, "error");
    return n;
  }

  std::uint16_t hex_id(const json& j, const std::string& w, const char* key) const {
    const std::string text = get<std::string>(j, w, key);
    try {
      std::size_t used = 0;
      const unsigned long v = std::stoul(text, &used, 16);
      if (used == text.size() && v <= 0xffff) return static_cast<std::uint16_t>(v);
    } catch (const std::exception&) {
    }
    fail(fmt::format("{}.{}", w, key), fmt::format("'{}' is not a 16-bit hex id", text));
  }

  Gpu gpu(const json& j, const std::string& w) const {
    Gpu g;
    g.pci_bus_id = get<std::string>(j, w, "pci_bus_id");
    g.vendor_id = hex_id(j, w, "vendor_id");
    g.device_id = hex_id(j, w, "device_id");
    g.name = string_or_empty(j, w, "name");
    g.os_devices = get<std::vector<std::string>>(j, w, "os_devices");
    g.pcie_path = pcie_path(j, w);
    g.numa_node = numa_node(j, w);
    g.pcie_link_gbyte_s = rate(j, w, "pcie_link_gbyte_s");
    return g;
  }

  HostTopology host(const json& j, const std::string& w) const {
    HostTopology h;
    h.host = get<std::string>(j, w, "host");
    h.ranks = get<std::vector<int>>(j, w, "ranks");
    h.packages = get<int>(j, w, "packages");
    h.cores = get<int>(j, w, "cores");
    h.pus = get<int>(j, w, "pus");
    const json& nodes = array(j, w, "numa_nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string nw = fmt::format("{}.numa_nodes[{}]", w, i);
      h.numa_nodes.push_back(
          {get<int>(nodes[i], nw, "os_index"), get<std::string>(nodes[i], nw, "cpus"),
           get<int>(nodes[i], nw, "pu_count"), get<std::uint64_t>(nodes[i], nw, "memory_bytes")});
    }
    const json& rdma = at(j, w, "rdma");
    h.rdma_available = get<bool>(rdma, w + ".rdma", "available");
    h.rdma_reason = string_or_empty(rdma, w + ".rdma", "reason");
    const json& nics = array(j, w, "nics");
    for (std::size_t i = 0; i < nics.size(); ++i) {
      h.nics.push_back(nic(nics[i], fmt::format("{}.nics[{}]", w, i)));
    }
    const json& gpus = array(j, w, "gpus");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      h.gpus.push_back(gpu(gpus[i], fmt::format("{}.gpus[{}]", w, i)));
    }
    const json& pairs = array(j, w, "gpu_nic");
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string pw = fmt::format("{}.gpu_nic[{}]", w, i);
      const std::string cls = get<std::string>(pairs[i], pw, "class");
      const auto parsed = path_class_from_string(cls);
      if (!parsed) fail(pw + ".class", fmt::format("unknown class '{}'", cls));
      h.gpu_nic.push_back(
          {get<std::string>(pairs[i], pw, "gpu"), get<std::string>(pairs[i], pw, "nic"), *parsed});
    }
    h.notes = get<std::vector<std::string>>(j, w, "notes");
    return h;
  }

 private:
  std::string_view source_;
};

}  // namespace

nlohmann::json to_json(const HostTopology& h) {
  json nodes = json::array();
  for (const NumaNode& n : h.numa_nodes) {
    nodes.push_back({{"os_index", n.os_index},
                     {"cpus", n.cpus},
                     {"pu_count", n.pu_count},
                     {"memory_bytes", n.memory_bytes}});
  }
  json nics = json::array();
  for (const Nic& n : h.nics) nics.push_back(to_json(n));
  json gpus = json::array();
  for (const Gpu& g : h.gpus) gpus.push_back(to_json(g));
  json pairs = json::array();
  for (const GpuNicDistance& d : h.gpu_nic) {
    pairs.push_back({{"gpu", d.gpu}, {"nic", d.nic}, {"class", to_string(d.path_class)}});
  }
  return {{"host", h.host},
          {"ranks", h.ranks},
          {"packages", h.packages},
          {"cores", h.cores},
          {"pus", h.pus},
          {"numa_nodes", nodes},
          {"rdma", {{"available", h.rdma_available}, {"reason", or_null(h.rdma_reason)}}},
          {"nics", nics},
          {"gpus", gpus},
          {"gpu_nic", pairs},
          {"notes", h.notes}};
}

HostTopology host_topology_from_json(const nlohmann::json& j, std::string_view source) {
  return Reader(source).host(j, "host");
}

nlohmann::json topology_section_json(const std::vector<HostTopology>& hosts) {
  json list = json::array();
  for (const HostTopology& h : hosts) list.push_back(to_json(h));
  return {{"hosts", list}};
}

std::vector<HostTopology> topology_from_section_json(const nlohmann::json& j,
                                                     std::string_view source) {
  const Reader reader(source);
  const json& list = reader.array(j, "topology", "hosts");
  std::vector<HostTopology> hosts;
  for (std::size_t i = 0; i < list.size(); ++i) {
    hosts.push_back(reader.host(list[i], fmt::format("topology.hosts[{}]", i)));
  }
  return hosts;
}

std::string encode_host_topology(const HostTopology& host) { return to_json(host).dump(); }

HostTopology decode_host_topology(std::string_view text, std::string_view source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: topology is not valid JSON: {}", source, e.what()));
  }
  return host_topology_from_json(j, source);
}

}  // namespace ibscope::results
