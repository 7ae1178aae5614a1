#include "ibscope/accept/counter_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "ibscope/core/units.hpp"

namespace ibscope::accept {
namespace {

using fabric::CounterKind;
using fabric::CounterSource;

// Counters of packets moved, one per direction per source (unicast/multicast would count twice).
bool counts_packets(const fabric::CounterDelta& c) noexcept {
  static constexpr std::array<std::string_view, 8> kNames{
      "port_xmit_packets", "port_rcv_packets", "sent_pkts", "rcvd_pkts",
      "tx_packets",        "rx_packets",       "OutSegs",   "InSegs"};
  return c.kind == CounterKind::kTraffic &&
         std::find(kNames.begin(), kNames.end(), c.name) != kNames.end();
}

bool physical(const fabric::CounterDelta& c) noexcept {
  return c.source == CounterSource::kIbPort || c.source == CounterSource::kNetdev;
}

bool transport(const fabric::CounterDelta& c) noexcept { return !physical(c); }

void append(std::string& text, const fabric::NicDelta& nic, const std::string& what) {
  text += fmt::format("{}{} {}: {}", text.empty() ? "" : "; ", nic.host, nic.nic, what);
}

}  // namespace

std::vector<fabric::NicDelta> link_nics(const std::vector<fabric::NicDelta>& deltas,
                                        const std::string& host_a, const std::string& nic_a,
                                        const std::string& host_b, const std::string& nic_b,
                                        bool tcp) {
  auto same_nic = [](const std::string& counted, const std::string& link) {
    if (link.empty()) return false;
    // "mlx5_2:1" counted; the link may name "mlx5_2:1" or "mlx5_2".
    return counted == link || counted.rfind(link + ":", 0) == 0;
  };
  // Two hosts in one network namespace (emulated hosts on one machine) share its TCP counters:
  // they say nothing about this link.
  std::string scope_a, scope_b;
  for (const auto& d : deltas) {
    if (d.nic == "tcp") (d.host == host_a ? scope_a : scope_b) = d.scope;
  }
  if (!scope_a.empty() && scope_a == scope_b && host_a != host_b) tcp = false;
  std::vector<fabric::NicDelta> out;
  for (const auto& [host, nic] : {std::pair{&host_a, &nic_a}, std::pair{&host_b, &nic_b}}) {
    if (host != &host_a && *host == host_a) break;  // a link inside one host: once
    bool matched = false;
    for (const auto& d : deltas) matched = matched || (d.host == *host && same_nic(d.nic, *nic));
    for (const auto& d : deltas) {
      if (d.host != *host || (d.nic == "tcp" && !tcp)) continue;
      if (!matched || same_nic(d.nic, *nic) || (tcp && d.nic == "tcp")) out.push_back(d);
    }
  }
  return out;
}

std::uint64_t packets_moved(const fabric::NicDelta& nic) noexcept {
  std::uint64_t n = 0;
  for (const auto& c : nic.counters) {
    if (counts_packets(c)) n += c.delta;
  }
  return n;
}

CounterFindings judge_counters(const std::vector<fabric::NicDelta>& deltas,
                               const CounterThresholds& t) {
  CounterFindings f;
  for (const fabric::NicDelta& nic : deltas) {
    std::uint64_t link_errors = 0, transport_errors = 0;
    for (const auto& c : nic.counters) {
      if (c.kind != CounterKind::kErrors) continue;
      (physical(c) ? link_errors : transport_errors) += c.delta;
    }
    const std::uint64_t packets = packets_moved(nic);
    if (link_errors > t.max_link_errors) {
      f.errors = true;
      append(f.errors_text, nic, nic.describe(CounterKind::kErrors, physical));
    }
    if (transport_errors > 0 && transport_errors >= t.min_retransmits) {
      const double ppm =
          packets > 0 ? 1e6 * static_cast<double>(transport_errors) / static_cast<double>(packets)
                      : 1e6;
      if (ppm > t.max_retransmit_ppm) {
        f.errors = true;
        append(f.errors_text, nic,
               packets > 0 ? fmt::format("{} ({} ppm of {} packets)",
                                         nic.describe(CounterKind::kErrors, transport),
                                         units::with_commas(static_cast<std::uint64_t>(ppm + 0.5)),
                                         units::with_commas(packets))
                           : nic.describe(CounterKind::kErrors, transport));
      }
    }
    if (nic.sum(CounterKind::kFlaps) > 0) {
      f.flapped = true;
      append(f.flaps_text, nic, nic.describe(CounterKind::kFlaps));
    }
    const std::uint64_t congestion = nic.sum(CounterKind::kCongestion);
    if (congestion > 0) {
      const double pct = 100.0 * static_cast<double>(congestion) /
                         static_cast<double>(congestion + std::max<std::uint64_t>(packets, 1));
      f.congestion_pct = std::max(f.congestion_pct, pct);
      if (pct >= t.congestion_finding_pct) {
        f.congested = true;
        append(f.congestion_text, nic,
               fmt::format("{} ({:.1f} % of events)", nic.describe(CounterKind::kCongestion), pct));
      }
    }
  }
  return f;
}

std::string CounterFindings::summary() const {
  std::string out;
  auto add = [&](std::string_view label, const std::string& text) {
    if (!text.empty()) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", label, text);
  };
  add("errors", errors_text);
  add("flapped", flaps_text);
  add("congestion", congestion_text);
  return out.empty() ? "no error, flap or congestion counter moved" : out;
}

}  // namespace ibscope::accept
