#include "ibscope/topo/rail_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "ibscope/core/error.hpp"

namespace ibscope::topo {

namespace {

// Natural order: "mlx5_2" < "mlx5_10" (digit runs compare as numbers).
bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string_view da = a.substr(i, ie - i), db = b.substr(j, je - j);
      const std::string_view ta = da.substr(std::min(da.find_first_not_of('0'), da.size()));
      const std::string_view tb = db.substr(std::min(db.find_first_not_of('0'), db.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

const NicPort* first_active_port(const Nic& nic) {
  for (const auto& p : nic.ports) {
    if (p.active()) return &p;
  }
  return nullptr;
}

RailChoice make_choice(const Nic& nic, const NicPort* port, int port_number) {
  RailChoice c;
  c.nic = nic.name;
  c.port = port != nullptr ? port->port : port_number;
  c.netdev = nic.netdev;
  c.is_virtual = nic.is_virtual;
  c.link_layer = port != nullptr ? port->link_layer : "";
  // The only software RoCE device Linux has is rdma_rxe (siw is iWARP).
  c.soft_roce = nic.is_virtual && !nic.name.starts_with("siw") &&
                (c.link_layer == "Ethernet" || nic.name.starts_with("rxe"));
  c.numa_node = nic.numa_node;
  return c;
}

std::string nic_names(const std::vector<const Nic*>& nics) {
  std::string s;
  for (const Nic* n : nics) s += (s.empty() ? "" : ", ") + n->name;
  return s.empty() ? "none" : s;
}

}  // namespace

std::string RailChoice::device_port() const { return fmt::format("{}:{}", nic, port); }

std::vector<NicRequest> parse_nic_list(std::string_view text) {
  std::vector<NicRequest> out;
  if (text.empty()) return out;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto colon = item.find(':');
    NicRequest r;
    r.nic = std::string(item.substr(0, colon));
    if (r.nic.empty()) {
      throw UsageError(fmt::format("--nic '{}': empty device name in the list", text));
    }
    if (colon != std::string_view::npos) {
      const std::string_view port = item.substr(colon + 1);
      const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), r.port);
      if (ec != std::errc{} || end != port.data() + port.size() || r.port < 1 || r.port > 255) {
        throw UsageError(fmt::format("--nic '{}': port '{}' of {} is not a number from 1 to 255",
                                     text, port, r.nic));
      }
    }
    out.push_back(std::move(r));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

std::vector<const Nic*> active_nics(const HostTopology& host) {
  std::vector<const Nic*> nics;
  for (const auto& n : host.nics) {
    if (first_active_port(n) != nullptr) nics.push_back(&n);
  }
  std::sort(nics.begin(), nics.end(),
            [](const Nic* a, const Nic* b) { return natural_less(a->name, b->name); });
  return nics;
}

std::optional<RailChoice> choose_rail(const HostTopology& host, int local_rank,
                                      const std::vector<NicRequest>& requested, bool gpu_buffers) {
  if (local_rank < 0) throw UsageError(fmt::format("local rank {} is negative", local_rank));
  const auto slot = static_cast<std::size_t>(local_rank);

  if (!requested.empty()) {  // rule 1
    const NicRequest& want = requested[slot % requested.size()];
    const Nic* nic = find_nic(host, want.nic);
    if (nic == nullptr) {
      std::string have;
      for (const auto& n : host.nics) have += (have.empty() ? "" : ", ") + n.name;
      throw UsageError(fmt::format("--nic {}: {} has no RDMA device of that name (it has: {})",
                                   want.nic, host.host, have.empty() ? "none" : have));
    }
    const NicPort* port = nullptr;
    for (const auto& p : nic->ports) {
      if (want.port == 0 ? p.active() : p.port == want.port) {
        port = &p;
        break;
      }
    }
    RailChoice c = make_choice(*nic, port, want.port == 0 ? 1 : want.port);
    c.reason = fmt::format("{} (entry {} of --nic), local rank {}", c.device_port(),
                           slot % requested.size(), local_rank);
    return c;
  }

  const std::vector<const Nic*> nics = active_nics(host);
  if (nics.empty()) return std::nullopt;  // rule 4

  if (gpu_buffers && !host.gpus.empty()) {  // rule 2
    std::vector<const Gpu*> gpus;
    for (const auto& g : host.gpus) gpus.push_back(&g);
    std::sort(gpus.begin(), gpus.end(),
              [](const Gpu* a, const Gpu* b) { return a->pci_bus_id < b->pci_bus_id; });
    const Gpu& gpu = *gpus[slot % gpus.size()];
    const std::vector<GpuNicDistance> classes =
        host.gpu_nic.empty() ? compute_gpu_nic_distances(host) : host.gpu_nic;
    auto class_of = [&](const Nic* n) {
      for (const auto& d : classes) {
        if (d.gpu == gpu.pci_bus_id && d.nic == n->name) return d.path_class;
      }
      return PathClass::kUnknown;
    };
    PathClass best = PathClass::kUnknown;
    for (const Nic* n : nics) best = std::min(best, class_of(n));
    std::vector<const Nic*> candidates;
    for (const Nic* n : nics) {
      if (class_of(n) == best) candidates.push_back(n);
    }
    const Nic& nic = *candidates[(slot / gpus.size()) % candidates.size()];
    RailChoice c = make_choice(nic, first_active_port(nic), 1);
    c.gpu = gpu.pci_bus_id;
    c.reason = fmt::format("{} ({} to GPU {}), local rank {}", c.device_port(), to_string(best),
                           gpu.pci_bus_id, local_rank);
    return c;
  }

  const Nic& nic = *nics[slot % nics.size()];  // rule 3
  RailChoice c = make_choice(nic, first_active_port(nic), 1);
  c.reason = fmt::format("{} (NIC {} of the active ones: {}), local rank {}", c.device_port(),
                         slot % nics.size(), nic_names(nics), local_rank);
  return c;
}

}  // namespace ibscope::topo
