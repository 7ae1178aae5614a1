#include "ibscope/output/congestion_table.hpp"

#include <fmt/format.h>

#include <cmath>

namespace ibscope::output {

std::string congestion_table(const results::AcceptCongestion& c) {
  std::string hosts;
  for (const auto& h : c.victim_hosts) hosts += (hosts.empty() ? "" : ",") + h;
  std::string out = fmt::format(
      "# congestion: {} victim rank(s) on {} ({} pair(s); {} B ping-pong, {} B all-reduce), {} "
      "congestor rank(s) on {} host(s), {} B messages; impact = congested/isolated (latency), "
      "isolated/congested (busbw)\n",
      c.victim_ranks.size(), hosts, c.victim_pairs, c.latency_bytes, c.allreduce_bytes,
      c.congestor_ranks, c.congestor_hosts, c.congestor_bytes);
  out += fmt::format("{:<10} {:<16} {:>14} {:>14} {:>8} {:>7}  {}\n", "congestor", "victim_metric",
                     "isolated", "congested", "impact", "max", "verdict");
  for (const auto& i : c.impacts) {
    out += fmt::format("{:<10} {:<16} {:>14.4g} {:>14.4g} {:>8} {:>7.2f}  {}\n", i.congestor,
                       i.metric, i.isolated, i.congested,
                       std::isnan(i.impact) ? std::string("-") : fmt::format("{:.2f}", i.impact),
                       i.max_impact, i.pass ? "PASS" : "FAIL");
  }
  for (const auto& l : c.loads) {
    out += fmt::format("# congestor {}: {} round(s) in {:.3f} s, {:.4g} GB/s received\n",
                       l.congestor, l.rounds, l.seconds, l.received_gbps);
  }
  return out;
}

}  // namespace ibscope::output
