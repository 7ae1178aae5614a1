#include "ibscope/accept/expected_rate.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"

namespace ibscope::accept {

LinkKind parse_link_kind(std::string_view text) {
  if (text == "ib") return LinkKind::kInfiniBand;
  if (text == "roce") return LinkKind::kRoceV2;
  if (text == "tcp") return LinkKind::kTcpEthernet;
  if (text == "tcp-shaped") return LinkKind::kTcpShaped;
  throw UsageError(
      fmt::format("unknown link type '{}': expected ib, roce, tcp or tcp-shaped", text));
}

std::string_view to_string(LinkKind kind) noexcept {
  switch (kind) {
    case LinkKind::kInfiniBand:
      return "ib";
    case LinkKind::kRoceV2:
      return "roce";
    case LinkKind::kTcpEthernet:
      return "tcp";
    case LinkKind::kTcpShaped:
      return "tcp-shaped";
  }
  return "?";
}

double payload_efficiency(LinkKind kind, std::uint32_t mtu_bytes) noexcept {
  const double m = mtu_bytes > 0 ? static_cast<double>(mtu_bytes) : 4096.0;
  switch (kind) {
    case LinkKind::kInfiniBand:
      return m / (m + 26.0);
    case LinkKind::kRoceV2:
      return m / (m + 82.0);
    case LinkKind::kTcpEthernet:
      return 1448.0 / 1538.0;
    case LinkKind::kTcpShaped:
      return 1448.0 / 1514.0;
  }
  return 1.0;
}

double expected_payload_gbps(double data_rate_gbit, LinkKind kind,
                             std::uint32_t mtu_bytes) noexcept {
  return data_rate_gbit / 8.0 * payload_efficiency(kind, mtu_bytes);
}

}  // namespace ibscope::accept
