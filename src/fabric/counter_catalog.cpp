#include "ibscope/fabric/counter_catalog.hpp"

#include <array>
#include <cctype>

namespace ibscope::fabric {
namespace {

using K = CounterKind;
using S = CounterSource;
using L = CounterLimit;

// IB PMA PortCounters widths (IBTA vol. 1, 16.1.3.5): the error counters saturate. The data and
// packet counters are read by the kernel from PortCountersExtended (64 bits) where the port
// has them, else from the 32-bit PortCounters: counter_delta.cpp takes a drop below a 32-bit
// value as a wrap.
constexpr std::array kCatalog{
    // ib_port: ports/<p>/counters/
    CounterSpec{"symbol_error", S::kIbPort, K::kErrors, 16, L::kSaturates, 0, "",
                "minor link errors on one or more physical lanes (bad symbols)"},
    CounterSpec{"link_error_recovery", S::kIbPort, K::kErrors, 8, L::kSaturates, 0, "",
                "link retrained after errors without going down"},
    CounterSpec{"link_downed", S::kIbPort, K::kFlaps, 8, L::kSaturates, 0, "",
                "link failed its recovery and went down"},
    CounterSpec{"port_rcv_errors", S::kIbPort, K::kErrors, 16, L::kSaturates, 0, "",
                "received packets with errors (CRC, length, malformed)"},
    CounterSpec{"port_rcv_remote_physical_errors", S::kIbPort, K::kErrors, 16, L::kSaturates, 0, "",
                "received packets marked bad by an upstream link (EBP)"},
    CounterSpec{"port_rcv_switch_relay_errors", S::kIbPort, K::kErrors, 16, L::kSaturates, 0, "",
                "received packets a switch could not forward"},
    CounterSpec{"port_xmit_discards", S::kIbPort, K::kErrors, 16, L::kSaturates, 0, "",
                "outbound packets discarded (port down, head-of-queue timeout)"},
    CounterSpec{"port_xmit_constraint_errors", S::kIbPort, K::kErrors, 8, L::kSaturates, 0, "",
                "outbound packets dropped by partition or raw-packet constraints"},
    CounterSpec{"port_rcv_constraint_errors", S::kIbPort, K::kErrors, 8, L::kSaturates, 0, "",
                "inbound packets dropped by partition or raw-packet constraints"},
    CounterSpec{"local_link_integrity_errors", S::kIbPort, K::kErrors, 4, L::kSaturates, 0, "",
                "local physical errors beyond the link's integrity threshold"},
    CounterSpec{"excessive_buffer_overrun_errors", S::kIbPort, K::kErrors, 4, L::kSaturates, 0, "",
                "consecutive receive buffer overruns (flow control broken)"},
    CounterSpec{"VL15_dropped", S::kIbPort, K::kOther, 16, L::kSaturates, 0, "",
                "subnet management packets dropped (no buffer)"},
    CounterSpec{"port_xmit_wait", S::kIbPort, K::kCongestion, 32, L::kSaturates, 0, "",
                "ticks with data to send but no flow-control credits (congestion)"},
    CounterSpec{"port_xmit_data", S::kIbPort, K::kTraffic, 64, L::kWraps, 4, "",
                "data octets sent, in 4-octet words"},
    CounterSpec{"port_rcv_data", S::kIbPort, K::kTraffic, 64, L::kWraps, 4, "",
                "data octets received, in 4-octet words"},
    CounterSpec{"port_xmit_packets", S::kIbPort, K::kTraffic, 64, L::kWraps, 0, "", "packets sent"},
    CounterSpec{"port_rcv_packets", S::kIbPort, K::kTraffic, 64, L::kWraps, 0, "",
                "packets received"},
    CounterSpec{"unicast_xmit_packets", S::kIbPort, K::kTraffic, 64, L::kWraps, 0, "",
                "unicast packets sent"},
    CounterSpec{"unicast_rcv_packets", S::kIbPort, K::kTraffic, 64, L::kWraps, 0, "",
                "unicast packets received"},
    CounterSpec{"multicast_xmit_packets", S::kIbPort, K::kTraffic, 64, L::kWraps, 0, "",
                "multicast packets sent"},
    CounterSpec{"multicast_rcv_packets", S::kIbPort, K::kTraffic, 64, L::kWraps, 0, "",
                "multicast packets received"},

    // hw: mlx5 (ConnectX), hw_counters/ of the port
    CounterSpec{"out_of_sequence", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "out-of-sequence packets received (a packet was lost before them)"},
    CounterSpec{"packet_seq_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "sequence-error NAKs received: the responder saw a gap"},
    CounterSpec{"implied_nak_seq_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "read/atomic responses implying a lost packet"},
    CounterSpec{"local_ack_timeout_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "transport retries after an ACK timeout (lost packets or ACKs)"},
    CounterSpec{"duplicate_request", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "duplicate requests received (the sender retransmitted)"},
    CounterSpec{"roce_adp_retrans", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "adaptive retransmissions (RoCE)"},
    CounterSpec{"roce_adp_retrans_to", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "adaptive retransmission timeouts (RoCE)"},
    CounterSpec{"rx_icrc_encapsulated", S::kHw, K::kErrors, 64, L::kWraps, 0, "mlx5",
                "RoCE packets with an invalid ICRC"},
    CounterSpec{"rnr_nak_retry_err", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "receiver-not-ready NAK retries exceeded (no receive posted: the application)"},
    CounterSpec{"out_of_buffer", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "packets dropped for want of a posted receive (the application)"},
    CounterSpec{"np_ecn_marked_roce_packets", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "received RoCE packets ECN-marked by a switch (notification point)"},
    CounterSpec{"np_cnp_sent", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "congestion notification packets sent (notification point)"},
    CounterSpec{"rp_cnp_handled", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "CNPs received and acted on: this sender slowed down (reaction point)"},
    CounterSpec{"rp_cnp_ignored", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "CNPs received and ignored (reaction point)"},
    CounterSpec{"roce_slow_restart", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "slow restarts after idle (RoCE congestion control)"},
    CounterSpec{"roce_slow_restart_cnps", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "CNPs sent during slow restart"},
    CounterSpec{"roce_slow_restart_trans", S::kHw, K::kCongestion, 64, L::kWraps, 0, "mlx5",
                "transitions to slow-restart state"},
    CounterSpec{"rx_write_requests", S::kHw, K::kTraffic, 64, L::kWraps, 0, "mlx5",
                "RDMA WRITE requests received"},
    CounterSpec{"rx_read_requests", S::kHw, K::kTraffic, 64, L::kWraps, 0, "mlx5",
                "RDMA READ requests received"},
    CounterSpec{"rx_atomic_requests", S::kHw, K::kTraffic, 64, L::kWraps, 0, "mlx5",
                "atomic requests received"},
    CounterSpec{"resp_local_length_error", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "responder length errors (the application)"},
    CounterSpec{"resp_cqe_error", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "responder completions with error"},
    CounterSpec{"req_cqe_error", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "requester completions with error"},
    CounterSpec{"req_remote_invalid_request", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "remote invalid-request NAKs (the application)"},
    CounterSpec{"req_remote_access_errors", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "remote access errors (keys, permissions)"},
    CounterSpec{"resp_remote_access_errors", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "responder access errors (keys, permissions)"},
    CounterSpec{"resp_cqe_flush_error", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "responder work flushed by a QP in error"},
    CounterSpec{"req_cqe_flush_error", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "requester work flushed by a QP in error"},
    CounterSpec{"lifespan", S::kHw, K::kOther, 64, L::kWraps, 0, "mlx5",
                "the counters' refresh period in ms (not a count)"},

    // hw: rxe (Soft-RoCE, Linux 6.1 rxe_hw_counters.c)
    CounterSpec{"sent_pkts", S::kHw, K::kTraffic, 64, L::kWraps, 0, "rxe", "packets sent"},
    CounterSpec{"rcvd_pkts", S::kHw, K::kTraffic, 64, L::kWraps, 0, "rxe", "packets received"},
    CounterSpec{"rdma_sends", S::kHw, K::kTraffic, 64, L::kWraps, 0, "rxe", "RDMA requests sent"},
    CounterSpec{"rdma_recvs", S::kHw, K::kTraffic, 64, L::kWraps, 0, "rxe",
                "RDMA requests received"},
    CounterSpec{"duplicate_request", S::kHw, K::kErrors, 64, L::kWraps, 0, "rxe",
                "duplicate requests received (the sender retransmitted)"},
    CounterSpec{"out_of_seq_request", S::kHw, K::kErrors, 64, L::kWraps, 0, "rxe",
                "requests received out of sequence (a packet was lost)"},
    CounterSpec{"rcvd_seq_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "rxe",
                "sequence-error NAKs received"},
    CounterSpec{"retry_exceeded_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "rxe",
                "transport retries exhausted: the QP failed"},
    CounterSpec{"completer_retry_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "rxe",
                "requester retransmissions after a timeout or NAK"},
    CounterSpec{"send_err", S::kHw, K::kErrors, 64, L::kWraps, 0, "rxe",
                "packets the device failed to send"},
    CounterSpec{"link_downed", S::kHw, K::kFlaps, 64, L::kWraps, 0, "rxe",
                "the netdev under the device went down"},
    CounterSpec{"rcvd_rnr_err", S::kHw, K::kOther, 64, L::kWraps, 0, "rxe",
                "receiver-not-ready NAKs received (the application)"},
    CounterSpec{"send_rnr_err", S::kHw, K::kOther, 64, L::kWraps, 0, "rxe",
                "receiver-not-ready NAKs sent (the application)"},
    CounterSpec{"retry_rnr_exceeded_err", S::kHw, K::kOther, 64, L::kWraps, 0, "rxe",
                "receiver-not-ready retries exhausted (the application)"},
    CounterSpec{"ack_deferred", S::kHw, K::kOther, 64, L::kWraps, 0, "rxe",
                "ACKs deferred (coalesced)"},

    // netdev: class/net/<if>/statistics/ and carrier_changes
    CounterSpec{"rx_bytes", S::kNetdev, K::kTraffic, 64, L::kWraps, 1, "", "bytes received"},
    CounterSpec{"tx_bytes", S::kNetdev, K::kTraffic, 64, L::kWraps, 1, "", "bytes sent"},
    CounterSpec{"rx_packets", S::kNetdev, K::kTraffic, 64, L::kWraps, 0, "", "packets received"},
    CounterSpec{"tx_packets", S::kNetdev, K::kTraffic, 64, L::kWraps, 0, "", "packets sent"},
    CounterSpec{"rx_errors", S::kNetdev, K::kErrors, 64, L::kWraps, 0, "",
                "bad packets received (all receive errors)"},
    CounterSpec{"tx_errors", S::kNetdev, K::kErrors, 64, L::kWraps, 0, "",
                "packets that failed to send"},
    CounterSpec{"rx_crc_errors", S::kNetdev, K::kErrors, 64, L::kWraps, 0, "",
                "frames received with a bad CRC (cable, optics)"},
    CounterSpec{"rx_frame_errors", S::kNetdev, K::kErrors, 64, L::kWraps, 0, "",
                "frames received misaligned"},
    CounterSpec{"rx_length_errors", S::kNetdev, K::kErrors, 64, L::kWraps, 0, "",
                "frames received with a bad length"},
    CounterSpec{"tx_carrier_errors", S::kNetdev, K::kErrors, 64, L::kWraps, 0, "",
                "frames lost to carrier problems"},
    CounterSpec{"rx_missed_errors", S::kNetdev, K::kCongestion, 64, L::kWraps, 0, "",
                "frames the host missed (receive ring full)"},
    CounterSpec{"rx_over_errors", S::kNetdev, K::kCongestion, 64, L::kWraps, 0, "",
                "receive FIFO overruns"},
    CounterSpec{"rx_dropped", S::kNetdev, K::kOther, 64, L::kWraps, 0, "",
                "packets dropped by the stack (often protocols nobody listens to)"},
    CounterSpec{"tx_dropped", S::kNetdev, K::kOther, 64, L::kWraps, 0, "",
                "packets dropped before sending (queue discipline, no route)"},
    CounterSpec{"carrier_changes", S::kNetdev, K::kFlaps, 64, L::kWraps, 0, "",
                "carrier went down or up (two per flap)"},

    // tcp: the namespace's /proc/net/snmp (Tcp:) and /proc/net/netstat (TcpExt:, IpExt:)
    CounterSpec{"RetransSegs", S::kTcp, K::kErrors, 64, L::kWraps, 0, "",
                "TCP segments retransmitted (loss, or a queue that dropped)"},
    CounterSpec{"InErrs", S::kTcp, K::kErrors, 64, L::kWraps, 0, "",
                "TCP segments received with errors (checksum)"},
    CounterSpec{"OutSegs", S::kTcp, K::kTraffic, 64, L::kWraps, 0, "", "TCP segments sent"},
    CounterSpec{"InSegs", S::kTcp, K::kTraffic, 64, L::kWraps, 0, "", "TCP segments received"},
    CounterSpec{"OutRsts", S::kTcp, K::kOther, 64, L::kWraps, 0, "", "TCP resets sent"},
    CounterSpec{"TCPTimeouts", S::kTcp, K::kOther, 64, L::kWraps, 0, "",
                "retransmission timer expiries (part of RetransSegs' causes)"},
    CounterSpec{"TCPFastRetrans", S::kTcp, K::kOther, 64, L::kWraps, 0, "",
                "fast retransmissions (part of RetransSegs)"},
    CounterSpec{"TCPLostRetransmit", S::kTcp, K::kOther, 64, L::kWraps, 0, "",
                "retransmissions that were lost again"},
    // ECN on the receiving side (/proc/net/netstat IpExt: and TcpExt:): a switch (or a marking
    // rule at an emulated bottleneck) set Congestion Experienced on packets to this host.
    CounterSpec{"InCEPkts", S::kTcp, K::kCongestion, 64, L::kWraps, 0, "",
                "IP packets received marked Congestion Experienced (ECN)"},
    CounterSpec{"TCPDeliveredCE", S::kTcp, K::kCongestion, 64, L::kWraps, 0, "",
                "TCP segments delivered that carried an ECN CE mark"},
};

}  // namespace

std::span<const CounterSpec> counter_catalog() noexcept { return kCatalog; }

std::optional<CounterSpec> find_counter(CounterSource source, std::string_view driver,
                                        std::string_view name) noexcept {
  for (const CounterSpec& s : kCatalog) {
    if (s.source == source && s.name == name && (s.driver.empty() || s.driver == driver)) return s;
  }
  return std::nullopt;
}

std::string_view name_of(CounterKind kind) noexcept {
  switch (kind) {
    case CounterKind::kErrors:
      return "errors";
    case CounterKind::kCongestion:
      return "congestion";
    case CounterKind::kFlaps:
      return "flaps";
    case CounterKind::kTraffic:
      return "traffic";
    case CounterKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view name_of(CounterSource source) noexcept {
  switch (source) {
    case CounterSource::kIbPort:
      return "ib_port";
    case CounterSource::kHw:
      return "hw";
    case CounterSource::kNetdev:
      return "netdev";
    case CounterSource::kTcp:
      return "tcp";
  }
  return "hw";
}

std::optional<CounterKind> counter_kind_named(std::string_view name) noexcept {
  for (const CounterKind k : {CounterKind::kErrors, CounterKind::kCongestion, CounterKind::kFlaps,
                              CounterKind::kTraffic, CounterKind::kOther}) {
    if (name_of(k) == name) return k;
  }
  return std::nullopt;
}

std::optional<CounterSource> counter_source_named(std::string_view name) noexcept {
  for (const CounterSource s :
       {CounterSource::kIbPort, CounterSource::kHw, CounterSource::kNetdev, CounterSource::kTcp}) {
    if (name_of(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view driver_of_device(std::string_view device) noexcept {
  std::size_t end = device.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(device[end - 1]))) --end;
  if (end > 0 && device[end - 1] == '_') --end;
  return device.substr(0, end);
}

}  // namespace ibscope::fabric
