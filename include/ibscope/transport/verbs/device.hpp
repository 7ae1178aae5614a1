#pragma once
/// An opened RDMA device (ibv_context) and what its queries say: device limits, port state,
/// link layer, speed x width -> line rate, MTU and the GID table with RoCE types.
/// DeviceContext is shared (std::shared_ptr): protection domains and completion queues hold
/// it, so the device is closed only after every child is gone.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/handle.hpp"

struct ibv_context;

namespace ibscope::verbs {

void close_context(ibv_context* context) noexcept;

enum class GidType { kIb, kRoceV1, kRoceV2 };
std::string_view to_string(GidType type) noexcept;  ///< "IB", "RoCE v1", "RoCE v2"

struct GidEntry {
  std::uint32_t index = 0;
  std::array<std::uint8_t, 16> raw{};
  GidType type = GidType::kIb;
  std::uint32_t netdev_ifindex = 0;   ///< 0 when not bound to a network device
  std::string netdev;                 ///< interface name from the ifindex ("" if none)
  bool ipv4_mapped() const noexcept;  ///< ::ffff:a.b.c.d
  std::string text() const;           ///< "fe80::...", or "::ffff:192.0.2.1"
};

/// ibv_port_attr decoded. Rates: the nominal signalling rate per lane x lanes (what ibstat
/// prints as "Rate"), and the data rate after line encoding (8b/10b up to QDR, 64b/66b from
/// FDR10); GB/s = 1e9 B/s.
struct PortInfo {
  std::uint8_t port = 1;
  std::string state;  ///< "ACTIVE", "DOWN", "INIT", "ARMED", ...
  bool active = false;
  std::string link_layer;  ///< "InfiniBand" or "Ethernet"
  bool ethernet = false;
  int lanes = 0;              ///< active_width decoded: 1, 2, 4, 8 or 12
  std::string speed_name;     ///< "SDR" ... "NDR", or "unknown(N)"
  double lane_gbps = 0;       ///< nominal Gb/s per lane
  double line_rate_gbps = 0;  ///< lanes x lane_gbps (nominal)
  double data_rate_gbps = 0;  ///< after line encoding: the most payload the link can carry
  std::uint32_t active_mtu_bytes = 0;
  std::uint32_t max_mtu_bytes = 0;
  std::uint16_t lid = 0;
  std::vector<GidEntry> gids;  ///< populated entries only
};

/// Decodes ibv_port_attr speed/width codes (pure; unit-tested). Unknown codes give 0 rates.
struct LinkSpeed {
  int lanes = 0;
  std::string speed_name;
  double lane_gbps = 0, line_rate_gbps = 0, data_rate_gbps = 0;
};
LinkSpeed decode_link_speed(int active_speed_code, int active_width_code);
/// IBV_MTU_256..4096 code (1..5) <-> bytes; 0 for an unknown code/size.
std::uint32_t mtu_code_to_bytes(int code) noexcept;
int mtu_bytes_to_code(std::uint32_t bytes) noexcept;

/// The GID to use on a port when the user did not pick one: on Ethernet, a RoCE v2 entry
/// (IPv4-mapped first, the address family RoCE v2 deployments route); on InfiniBand, index 0.
/// Empty when the port has no usable GID (pure; unit-tested).
std::optional<std::uint32_t> choose_gid_index(const PortInfo& port);

struct DeviceLimits {
  std::string fw_version;
  std::uint64_t node_guid = 0;  ///< host byte order
  std::uint32_t vendor_id = 0, vendor_part_id = 0;
  int phys_port_count = 0;
  int max_qp_wr = 0, max_sge = 0, max_cqe = 0;
  int max_qp_rd_atom = 0, max_qp_init_rd_atom = 0;
  std::uint64_t max_mr_size = 0;
};

class DeviceContext {
 public:
  /// Opens device `name` (empty: the first device). Throws EnvironmentError with a remedy when
  /// the host has no RDMA device, libibverbs has no provider for it, or `name` does not exist
  /// (the message lists the devices present); VerbsError when ibv_open_device fails.
  static std::shared_ptr<DeviceContext> open(std::string_view name);

  const std::string& name() const noexcept { return name_; }
  ibv_context* get() const noexcept { return handle_.get(); }
  const DeviceLimits& limits() const noexcept { return limits_; }
  /// Queries the port and its GID table now. Throws VerbsError.
  PortInfo query_port(std::uint8_t port) const;
  /// Throws EnvironmentError naming the port, its state and the remedy unless it is ACTIVE.
  PortInfo require_active_port(std::uint8_t port) const;

 private:
  DeviceContext(std::string name, ibv_context* context);
  std::string name_;
  Handle<ibv_context*, close_context> handle_;
  DeviceLimits limits_;
};

/// Names of the devices libibverbs can open (empty when none; never throws).
std::vector<std::string> list_device_names();
/// Names under /sys/class/infiniband (devices the kernel knows, with or without a provider).
std::vector<std::string> kernel_device_names();

/// "rxe0" -> {"rxe0", 1}; "mlx5_0:2" -> {"mlx5_0", 2}. Throws UsageError on a bad port.
struct DevicePort {
  std::string device;  ///< empty: the first device
  std::uint8_t port = 1;
};
DevicePort parse_device_port(std::string_view text);

}  // namespace ibscope::verbs
