#include "ibscope/measure/rail_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/numa_binding.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"
#include "ibscope/transport/verbs/nic_ports.hpp"

namespace ibscope::measure {

RailSetup set_up_rail(const bootstrap::Bootstrap& boot, const RailRequest& request) {
  RailSetup s;
  const std::vector<topo::NicRequest> requested = topo::parse_nic_list(request.nic_list);
  if (requested.empty() && !topo::RdmaSysfs().has_devices()) {
    // The embedded default's path: no hwloc discovery for a host without RDMA devices.
    s.binding = "not bound: no RDMA device on this host";
    return s;
  }
  topo::HostTopology host;
  try {
    host = topo::discover_host_topology(boot.host(boot.rank()));
    verbs::fill_rdma_ports(host);
  } catch (const Error& e) {
    if (!requested.empty()) throw;
    s.warnings.push_back(
        fmt::format("rank {} ({}): topology discovery failed, UCX keeps its own NIC choice: {}",
                    boot.rank(), boot.host(boot.rank()), e.what()));
    s.binding = "not bound: topology unknown";
    return s;
  }
  // Rule 2 of choose_rail applies only where the host has GPUs: there each rank's GPU and NIC
  // pair up, whatever memory this job's buffers use.
  s.rail = topo::choose_rail(host, boot.local_rank(), requested, /*gpu_buffers=*/true);
  s.env = transport::data_transport().prepare(s.rail);
  s.warnings.insert(s.warnings.end(), s.env.warnings.begin(), s.env.warnings.end());

  if (!s.rail) {
    s.binding = "not bound: no ACTIVE RDMA port on this host";
  } else if (!request.bind) {
    s.binding = "not bound (--no-bind)";
  } else {
    const topo::BindResult b = topo::bind_to_numa_node(s.rail->numa_node);
    s.binding = b.message;
    if (b.bound) {
      s.numa_node = b.numa_node;
      s.cpus = b.cpus;
    } else {
      s.warnings.push_back(
          fmt::format("rank {} ({}): {}", boot.rank(), boot.host(boot.rank()), b.message));
    }
  }
  return s;
}

namespace {

// One rank's record on the wire: fields separated by 0x1f, list items by 0x1e (neither
// appears in device names, reasons or CPU lists).
constexpr char kField = '\x1f';
constexpr char kItem = '\x1e';

std::string join(const std::vector<std::string>& items, char sep) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i)
    s += (i == 0 ? "" : std::string(1, sep)) + items[i];
  return s;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  while (true) {
    const auto at = text.find(sep);
    out.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}

void add_distinct(std::vector<std::string>& to, const std::string& line) {
  if (std::find(to.begin(), to.end(), line) == to.end()) to.push_back(line);
}

}  // namespace

JobRails gather_rails(bootstrap::Bootstrap& boot, const RailSetup& mine,
                      const std::vector<std::string>& lane_nics) {
  std::vector<std::string> job_notes;
  for (const auto& n : mine.env.notes) {
    if (!n.starts_with("UCX_NET_DEVICES=")) job_notes.push_back(n);  // per rank: in `nic`
  }
  const std::vector<std::string> fields = {mine.rail ? mine.rail->device_port() : "",
                                           mine.rail ? mine.rail->netdev : "",
                                           mine.rail ? mine.rail->reason : "",
                                           join(lane_nics, kItem),
                                           std::to_string(mine.numa_node),
                                           mine.cpus,
                                           mine.binding,
                                           join(job_notes, kItem),
                                           join(mine.warnings, kItem)};
  const std::string record = join(fields, kField);
  const auto* p = reinterpret_cast<const std::byte*>(record.data());
  // Rank 0 only: it writes the results and prints the banner (O(n) bytes at the root).
  const auto all = boot.gather(bootstrap::Bytes(p, p + record.size()), "rails");

  JobRails out;
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {  // none on ranks other than 0
    const bootstrap::Bytes& b = all[static_cast<std::size_t>(r)];
    const std::vector<std::string> f =
        split(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), kField);
    if (f.size() != fields.size()) {
      throw RemoteError(fmt::format("rank {} sent a malformed rail record ({} fields, want {})", r,
                                    f.size(), fields.size()));
    }
    results::RankRail rail;
    rail.rank = r;
    rail.host = boot.host(r);
    rail.nic = f[0];
    rail.netdev = f[1];
    rail.reason = f[2];
    rail.lane_nics = split(f[3], kItem);
    rail.numa_node = std::atoi(f[4].c_str());
    rail.cpus = f[5];
    rail.binding = f[6];
    for (const auto& n : split(f[7], kItem)) add_distinct(out.notes, n);
    for (const auto& w : split(f[8], kItem)) add_distinct(out.warnings, w);
    if (!rail.nic.empty()) {
      std::string others;
      for (const auto& lane : rail.lane_nics) {
        if (lane != rail.nic) others += (others.empty() ? "" : ", ") + lane;
      }
      if (!others.empty()) {
        out.warnings.push_back(
            fmt::format("rank {} ({}): UCX lanes use {} besides its rail {}: UCX_NET_DEVICES was "
                        "overridden or UCX ignored it; the rank's traffic is not on its own NIC",
                        r, rail.host, others, rail.nic));
      }
    }
    out.ranks.push_back(std::move(rail));
  }
  return out;
}

std::optional<std::string> rail_link_problem(const RailSetup& setup,
                                             const std::string& sysfs_root) noexcept {
  try {
    if (!setup.rail) return std::nullopt;
    const topo::RdmaSysfs sysfs(sysfs_root);
    const std::string state = sysfs.port_attribute(setup.rail->nic, setup.rail->port, "state");
    if (state.empty() || topo::parse_port_state(state) == topo::PortState::kActive) {
      return std::nullopt;
    }
    const std::string phys = sysfs.phys_state(setup.rail->nic, setup.rail->port);
    return fmt::format(
        "its NIC {} is {}{}: this rank's link went down (cable, switch port or interface{}); "
        "`ibstat {}` shows it",
        setup.rail->device_port(), state,
        phys.empty() ? "" : fmt::format(" (physical state {})", phys),
        setup.rail->netdev.empty() ? "" : fmt::format(" {}", setup.rail->netdev), setup.rail->nic);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace ibscope::measure
