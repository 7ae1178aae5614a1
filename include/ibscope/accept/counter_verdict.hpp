#pragma once
/// Acceptance checks on NIC counters (pure; unit-tested; docs/counters.md, "Acceptance"). A
/// link's counters are the growth on its two hosts' NICs over the rows that measured it (its
/// rounds). It fails, whatever its bandwidth, when
///   link errors:    a physical-layer error counter (kind errors of the IB port counters or the
///                   interface statistics: symbol errors, CRC, receive errors) grew by more than
///                   max_link_errors on either end;
///   retransmits:    a transport's loss counters (kind errors of the driver's hw_counters or of
///                   TCP: out-of-sequence, retries, RetransSegs) grew by at least
///                   min_retransmits and by more than max_retransmit_ppm per million packets
///                   that NIC moved;
///   flap:           a flap counter (link_downed, carrier_changes) grew.
/// Congestion (port_xmit_wait, CNPs, ECN marks, receive-ring overruns) never fails a link: it is
/// a finding with its share, the congestion events over events plus packets moved, from
/// congestion_finding_pct on.

#include <cstdint>
#include <string>
#include <vector>

#include "ibscope/fabric/counters.hpp"

namespace ibscope::accept {

struct CounterThresholds {
  std::uint64_t max_link_errors = 0;
  double max_retransmit_ppm = 1000;
  std::uint64_t min_retransmits = 10;
  double congestion_finding_pct = 1.0;
};

struct CounterFindings {
  bool errors = false;   ///< fails: link errors or retransmits beyond the thresholds
  bool flapped = false;  ///< fails
  bool congested = false;
  double congestion_pct = 0;  ///< the largest share over the NICs
  /// "ibs-h1 ibs-eth: rx_crc_errors +3; ibs-h2 tcp: RetransSegs +1,081 (7,590 ppm of 142,400
  /// packets)": the counters behind each finding, "" where none.
  std::string errors_text, flaps_text, congestion_text;
  /// One line for the verdict table: what the counters say (the failure, the congestion, or
  /// that nothing but traffic moved).
  std::string summary() const;
};

CounterFindings judge_counters(const std::vector<fabric::NicDelta>& deltas,
                               const CounterThresholds& thresholds);

/// The counters of a link's own NICs: on host_a the NIC nic_a ("mlx5_2:1", "mlx5_2" or an
/// interface), on host_b nic_b, and each host's namespace TCP when the link rides TCP. On a
/// multi-rail host the other rails' NICs (busy with their own pairs in the same round) are
/// left out. A host whose NICs none of the names match keeps all of its NICs (the link's NIC
/// is unknown there).
std::vector<fabric::NicDelta> link_nics(const std::vector<fabric::NicDelta>& deltas,
                                        const std::string& host_a, const std::string& nic_a,
                                        const std::string& host_b, const std::string& nic_b,
                                        bool tcp);

/// Packets a NIC moved, both directions, from its packet counters (port, driver, interface or
/// TCP segments): the denominator of the retransmit rate; 0 when none is known.
std::uint64_t packets_moved(const fabric::NicDelta& nic) noexcept;

}  // namespace ibscope::accept
