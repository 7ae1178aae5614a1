#pragma once
/// What a link should carry: its data rate less the per-packet overheads of its link type,
/// made explicit so that "90 % of expected" means the same on InfiniBand, RoCE and TCP.
///
///   TCP over Ethernet (MTU 1500): payload per frame 1448 B (1500 - 20 IPv4 - 32 TCP with
///     timestamps) of 1538 B on the wire (+ 14 header, 4 FCS, 8 preamble, 12 inter-frame gap)
///     -> 0.9415; over a tc shaper, which counts 1514 B per frame (no FCS/preamble/gap):
///     1448 / 1514 = 0.9564.
///   RoCE v2 (path MTU M): payload M per packet of M + 14 Eth + 20 IPv4 + 8 UDP + 12 BTH
///     + 4 ICRC + 4 FCS + 8 preamble + 12 gap = M + 82 B (RDMA WRITE; RETH on the first
///     packet only is ignored).
///   InfiniBand (MTU M): payload M per packet of M + 8 LRH + 12 BTH + 4 ICRC + 2 VCRC = M + 26.

#include <cstdint>
#include <string_view>

namespace ibscope::accept {

enum class LinkKind {
  kInfiniBand,
  kRoceV2,
  kTcpEthernet,  ///< TCP payload on a physical Ethernet link
  kTcpShaped,    ///< TCP payload through a tc shaper (counts frames of 1514 B)
};

/// "ib", "roce", "tcp", "tcp-shaped" -> kind. Throws UsageError.
LinkKind parse_link_kind(std::string_view text);
std::string_view to_string(LinkKind kind) noexcept;

/// Payload bytes per wire byte for `kind` (mtu_bytes: the path MTU for IB and RoCE; ignored
/// for TCP, which assumes a 1500 B MTU). In (0, 1).
double payload_efficiency(LinkKind kind, std::uint32_t mtu_bytes) noexcept;

/// Expected payload rate in GB/s (1e9 B/s) of a link whose data rate is `data_rate_gbit`
/// Gb/s (after line encoding, as ibstat / PortInfo::data_rate_gbps report it).
double expected_payload_gbps(double data_rate_gbit, LinkKind kind,
                             std::uint32_t mtu_bytes) noexcept;

}  // namespace ibscope::accept
