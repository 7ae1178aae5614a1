#pragma once
/// Judging each NIC's loopback (pure; unit-tested): a NIC writing to and reading from itself
/// moves data through its PCIe route twice and never touches the fabric, so a slow loopback is
/// the NIC, its PCIe slot or its firmware, not a cable. Each figure (write, read) is judged
///  - against its siblings: the other NICs of the same host into the same memory; a figure
///    more than `slow_pct` % below their median fails ("rxe2 loopback write 0.41 GB/s, 62 %
///    below its 3 siblings' median 1.08 GB/s; path: NUMA 0 → pci ...");
///  - against its ceiling, the smaller of its port's data rate and its PCIe route's narrowest
///    link: below `min_fraction` of it fails. A virtual NIC (rxe, siw) has a nominal port rate
///    and no PCIe link of its own: it is not judged against a ceiling, and the verdict says so.
/// The siblings' median is link_verdict.hpp's median_of (the mean of the middle two for an even
/// count). A NIC alone on its host (for that memory) is judged against its ceiling only, and says
/// so.

#include <span>
#include <string>
#include <vector>

#include "ibscope/accept/link_verdict.hpp"
#include "ibscope/probes/loopback_figures.hpp"

namespace ibscope::accept {

struct LoopbackThresholds {
  double slow_pct = 25;       ///< --loopback-slow-pct: % below the siblings' median that fails
  double min_fraction = 0.5;  ///< --loopback-min-fraction: of the ceiling, hardware NICs only
};

struct LoopbackVerdict {
  probes::LoopbackFigures figures;
  int siblings = 0;                   ///< NICs of the same host and memory compared with
  double siblings_write_gbyte_s = 0;  ///< their medians (0 without siblings)
  double siblings_read_gbyte_s = 0;
  double ceiling_gbyte_s = 0;  ///< min(data rate, PCIe route); 0 when not judged
  bool pass = true;
  std::vector<std::string> failures;  ///< one line each; empty when it passed
  std::vector<std::string> notes;     ///< what it was not judged against, and why
};

/// "62 %": how far `value` is below `reference`, in percent (0 when not below).
double percent_below(double value, double reference) noexcept;

/// One verdict per figure, in the same order.
std::vector<LoopbackVerdict> judge_loopback(std::span<const probes::LoopbackFigures> figures,
                                            const LoopbackThresholds& thresholds);

}  // namespace ibscope::accept
