#include "ibscope/output/watch_summary.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ibscope::output {
namespace {

std::string counters_text(const std::map<std::string, std::uint64_t>& grown) {
  std::string out;
  for (const auto& [name, delta] : grown) {
    out += fmt::format("{}{} +{}", out.empty() ? "" : ", ", name, delta);
  }
  return out;
}

}  // namespace

std::string watch_summary(const fabric::WatchState& state, const std::string& host) {
  std::string out = fmt::format("# ibscope watch: {} NICs of {} over {:.1f} s\n",
                                state.totals().size(), host, state.elapsed_s());
  std::size_t width = 3;
  for (const auto& t : state.totals()) width = std::max(width, t.nic.size());
  out += fmt::format("# {:<{}} {:<7} {:>12} {:>10} {:>11} {:>9} {:>11} {:>13} {:>6}\n", "NIC",
                     width, "driver", "moved(MB)", "avg(MB/s)", "peak(MB/s)", "errors",
                     "congestion", "congested(%)", "flaps");
  std::vector<std::string> findings;
  for (const auto& t : state.totals()) {
    // The namespace's TCP counts segments, not bytes.
    const bool bytes = t.driver != "tcp";
    out += fmt::format(
        "  {:<{}} {:<7} {:>12} {:>10} {:>11} {:>9} {:>11} {:>13.1f} {:>6}{}\n", t.nic, width,
        t.driver, bytes ? fmt::format("{:.3f}", static_cast<double>(t.traffic_bytes) / 1e6) : "-",
        bytes ? fmt::format("{:.3f}", t.average_bytes_per_s() / 1e6) : "-",
        bytes ? fmt::format("{:.3f}", t.peak_bytes_per_s / 1e6) : "-", t.errors, t.congestion,
        100 * t.congested_share(), t.flaps, t.vanished ? "  (vanished)" : "");
    if (t.errors > 0) {
      findings.push_back(fmt::format("{}: errors: {}", t.nic, counters_text(t.errors_by_counter)));
    }
    for (const auto& name : t.saturated_errors) {
      findings.push_back(fmt::format(
          "{}: errors: {} at its maximum (saturated: growth unknown; clear it)", t.nic, name));
    }
    if (t.flaps > 0) {
      findings.push_back(fmt::format("{}: flaps: {}", t.nic, counters_text(t.flaps_by_counter)));
    }
    if (t.congested_intervals > 0) {
      findings.push_back(fmt::format("{}: congestion in {} of {} intervals ({:.1f} %)", t.nic,
                                     t.congested_intervals, t.intervals,
                                     100 * t.congested_share()));
    }
    if (t.imbalanced_intervals > 0) {
      findings.push_back(fmt::format("{}: a lagging rail in {} intervals (window {:.0f} s)", t.nic,
                                     t.imbalanced_intervals,
                                     state.thresholds().imbalance_window_s));
    }
  }
  for (const auto& f : state.whole_run_imbalance()) {
    findings.push_back(fmt::format("{}: rail imbalance over the whole watch: {}", f.nic, f.detail));
  }
  if (findings.empty()) {
    out += "# findings: none\n";
  } else {
    out += "# findings:\n";
    for (const auto& f : findings) out += fmt::format("#   {}\n", f);
  }
  return out;
}

}  // namespace ibscope::output
