#include "ibscope/transport/verbs/device.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>

#include "ibscope/core/error.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

void close_context(ibv_context* context) noexcept { api().close_device(context); }

std::string_view to_string(GidType type) noexcept {
  switch (type) {
    case GidType::kIb:
      return "IB";
    case GidType::kRoceV1:
      return "RoCE v1";
    case GidType::kRoceV2:
      return "RoCE v2";
  }
  return "?";
}

bool GidEntry::ipv4_mapped() const noexcept {
  for (int i = 0; i < 10; ++i) {
    if (raw[static_cast<std::size_t>(i)] != 0) return false;
  }
  return raw[10] == 0xff && raw[11] == 0xff;
}

std::string GidEntry::text() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, raw.data(), buffer, sizeof(buffer)) == nullptr) return "?";
  return buffer;
}

LinkSpeed decode_link_speed(int active_speed_code, int active_width_code) {
  LinkSpeed speed;
  switch (active_width_code) {
    case 1:
      speed.lanes = 1;
      break;
    case 2:
      speed.lanes = 4;
      break;
    case 4:
      speed.lanes = 8;
      break;
    case 8:
      speed.lanes = 12;
      break;
    case 16:
      speed.lanes = 2;
      break;
    default:
      speed.lanes = 0;
      break;
  }
  // Nominal per-lane rate as ibstat reports it, and the payload rate after line encoding:
  // 8b/10b up to QDR, 64b/66b for FDR10/FDR/EDR; HDR and NDR lanes are quoted at their data rate.
  struct Entry {
    int code;
    const char* name;
    double nominal_gbps, data_gbps;
  };
  static constexpr Entry kSpeeds[] = {
      {1, "SDR", 2.5, 2.0},
      {2, "DDR", 5.0, 4.0},
      {4, "QDR", 10.0, 8.0},
      {8, "FDR10", 10.0, 10.0},
      {16, "FDR", 14.0625, 14.0625 * 64.0 / 66.0},
      {32, "EDR", 25.0, 25.0},
      {64, "HDR", 50.0, 50.0},
      {128, "NDR", 100.0, 100.0},
  };
  const auto* entry = std::find_if(std::begin(kSpeeds), std::end(kSpeeds),
                                   [&](const Entry& e) { return e.code == active_speed_code; });
  if (entry == std::end(kSpeeds)) {
    speed.speed_name = fmt::format("unknown({})", active_speed_code);
    return speed;
  }
  speed.speed_name = entry->name;
  speed.lane_gbps = entry->nominal_gbps;
  speed.line_rate_gbps = entry->nominal_gbps * speed.lanes;
  speed.data_rate_gbps = entry->data_gbps * speed.lanes;
  return speed;
}

std::uint32_t mtu_code_to_bytes(int code) noexcept {
  return code >= 1 && code <= 5 ? 128u << code : 0;
}

int mtu_bytes_to_code(std::uint32_t bytes) noexcept {
  for (int code = 1; code <= 5; ++code) {
    if (mtu_code_to_bytes(code) == bytes) return code;
  }
  return 0;
}

std::optional<std::uint32_t> choose_gid_index(const PortInfo& port) {
  if (port.gids.empty()) return std::nullopt;
  if (!port.ethernet) return port.gids.front().index;
  const GidEntry* best = nullptr;
  for (const GidEntry& gid : port.gids) {
    if (gid.type != GidType::kRoceV2) continue;
    if (gid.ipv4_mapped()) return gid.index;
    if (best == nullptr) best = &gid;
  }
  if (best != nullptr) return best->index;
  return port.gids.front().index;
}

std::vector<std::string> list_device_names() {
  int count = 0;
  ibv_device** list = api().get_device_list(&count);
  std::vector<std::string> names;
  if (list == nullptr) return names;
  for (int i = 0; i < count; ++i) names.emplace_back(api().get_device_name(list[i]));
  api().free_device_list(list);
  return names;
}

std::vector<std::string> kernel_device_names() { return topo::RdmaSysfs().device_names(); }

DevicePort parse_device_port(std::string_view text) {
  DevicePort result;
  const auto colon = text.find(':');
  result.device = std::string(text.substr(0, colon));
  if (colon == std::string_view::npos) return result;
  const std::string_view port_text = text.substr(colon + 1);
  int port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < 1 || port > 255) {
    throw UsageError(
        fmt::format("bad device '{}': expected NAME or NAME:PORT with PORT 1..255", text));
  }
  result.port = static_cast<std::uint8_t>(port);
  return result;
}

std::shared_ptr<DeviceContext> DeviceContext::open(std::string_view name) {
  int count = 0;
  ibv_device** list = api().get_device_list(&count);
  const int list_errno = errno;
  if (list == nullptr || count == 0) {
    if (list != nullptr) api().free_device_list(list);
    const auto kernel = kernel_device_names();
    if (kernel.empty()) {
      throw EnvironmentError(
          "no RDMA device on this host (/sys/class/infiniband is empty or missing): load the "
          "NIC's RDMA driver (e.g. mlx5_ib), or for Soft-RoCE run "
          "'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev <interface>'");
    }
    throw EnvironmentError(fmt::format(
        "the kernel has RDMA device(s) {} but libibverbs opened none{}: install the user-space "
        "provider (Debian package ibverbs-providers) and load ib_uverbs so that "
        "/dev/infiniband/uverbs* exists",
        fmt::join(kernel, ", "),
        list == nullptr ? fmt::format(" ({})", std::strerror(list_errno)) : std::string()));
  }
  ibv_device* chosen = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.emplace_back(api().get_device_name(list[i]));
    if (chosen == nullptr && (name.empty() || names.back() == name)) chosen = list[i];
  }
  if (chosen == nullptr) {
    api().free_device_list(list);
    throw UsageError(fmt::format("no RDMA device named '{}' on this host; devices here: {}", name,
                                 fmt::join(names, ", ")));
  }
  std::string chosen_name = api().get_device_name(chosen);
  ibv_context* context = api().open_device(chosen);
  const int open_errno = errno;
  api().free_device_list(list);
  if (context == nullptr) {
    throw VerbsError("ibv_open_device", chosen_name, open_errno, {},
                     open_errno == EACCES || open_errno == EPERM
                         ? "check the permissions of /dev/infiniband/uverbs*"
                         : "");
  }
  return std::shared_ptr<DeviceContext>(new DeviceContext(std::move(chosen_name), context));
}

DeviceContext::DeviceContext(std::string name, ibv_context* context)
    : name_(std::move(name)), handle_(context) {
  ibv_device_attr attr{};
  if (const int rc = api().query_device(context, &attr); rc != 0) {
    throw VerbsError("ibv_query_device", name_, rc);
  }
  limits_.fw_version = attr.fw_ver;
  limits_.node_guid = be64toh(attr.node_guid);
  limits_.vendor_id = attr.vendor_id;
  limits_.vendor_part_id = attr.vendor_part_id;
  limits_.phys_port_count = attr.phys_port_cnt;
  limits_.max_qp_wr = attr.max_qp_wr;
  limits_.max_sge = attr.max_sge;
  limits_.max_cqe = attr.max_cqe;
  limits_.max_qp_rd_atom = attr.max_qp_rd_atom;
  limits_.max_qp_init_rd_atom = attr.max_qp_init_rd_atom;
  limits_.max_mr_size = attr.max_mr_size;
}

PortInfo DeviceContext::query_port(std::uint8_t port) const {
  if (port < 1 || port > limits_.phys_port_count) {
    throw UsageError(fmt::format("{} has {} port(s); port {} does not exist", name_,
                                 limits_.phys_port_count, port));
  }
  ibv_port_attr attr{};
  if (const int rc = api().query_port(get(), port, &attr); rc != 0) {
    throw VerbsError("ibv_query_port", name_, rc, fmt::format("port {}", port));
  }
  PortInfo info;
  info.port = port;
  // ibv_port_state_str() says "active"; ibstat and ibv_devinfo users read ACTIVE/DOWN/INIT.
  info.state = ibv_port_state_str(attr.state);
  std::transform(info.state.begin(), info.state.end(), info.state.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  info.active = attr.state == IBV_PORT_ACTIVE;
  info.ethernet = attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  info.link_layer = info.ethernet ? "Ethernet" : "InfiniBand";
  const LinkSpeed speed = decode_link_speed(attr.active_speed, attr.active_width);
  info.lanes = speed.lanes;
  info.speed_name = speed.speed_name;
  info.lane_gbps = speed.lane_gbps;
  info.line_rate_gbps = speed.line_rate_gbps;
  info.data_rate_gbps = speed.data_rate_gbps;
  info.active_mtu_bytes = mtu_code_to_bytes(attr.active_mtu);
  info.max_mtu_bytes = mtu_code_to_bytes(attr.max_mtu);
  info.lid = attr.lid;
  for (int index = 0; index < attr.gid_tbl_len; ++index) {
    ibv_gid_entry entry{};
    const int rc = api().query_gid_ex(get(), port, static_cast<std::uint32_t>(index), &entry);
    if (rc == ENODATA || rc == EINVAL) continue;  // empty slot
    if (rc != 0) {
      throw VerbsError("ibv_query_gid_ex", name_, rc, fmt::format("port {} index {}", port, index));
    }
    GidEntry gid;
    gid.index = entry.gid_index;
    std::copy(std::begin(entry.gid.raw), std::end(entry.gid.raw), gid.raw.begin());
    if (std::all_of(gid.raw.begin(), gid.raw.end(), [](std::uint8_t b) { return b == 0; })) {
      continue;
    }
    gid.type = entry.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::kRoceV2
               : entry.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1
                                                        : GidType::kIb;
    gid.netdev_ifindex = entry.ndev_ifindex;
    if (entry.ndev_ifindex != 0) {
      char ifname[IF_NAMESIZE] = {};
      if (if_indextoname(entry.ndev_ifindex, ifname) != nullptr) gid.netdev = ifname;
    }
    info.gids.push_back(std::move(gid));
  }
  return info;
}

PortInfo DeviceContext::require_active_port(std::uint8_t port) const {
  PortInfo info = query_port(port);
  if (!info.active) {
    throw EnvironmentError(fmt::format(
        "port {} of {} is {} (not ACTIVE): {}", port, name_, info.state,
        info.ethernet ? "bring its network interface up ('ip link set <interface> up') and "
                        "check the cable"
                      : "check the cable and that a subnet manager (opensm) runs on the fabric"));
  }
  return info;
}

}  // namespace ibscope::verbs
