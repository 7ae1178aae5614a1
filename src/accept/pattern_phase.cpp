#include "ibscope/accept/pattern_phase.hpp"

#include <fmt/format.h>

#include <set>

#include "ibscope/measure/p2p.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::accept {

std::vector<int> pattern_units(const std::vector<std::string>& host_of_rank) {
  std::vector<int> units;
  std::set<std::string> seen;
  for (std::size_t r = 0; r < host_of_rank.size(); ++r) {
    if (seen.insert(host_of_rank[r]).second) units.push_back(static_cast<int>(r));
  }
  return units;
}

void validate_pattern_for_hosts(const AcceptOptions& o,
                                const std::vector<std::string>& host_of_rank) {
  if (o.pattern.is_pairs()) return;
  measure::validate_pattern(o.pattern, o.pattern_hubs,
                            static_cast<int>(pattern_units(host_of_rank).size()));
}

std::vector<measure::P2pRow> run_pattern_phase(transport::Comm& comm, const AcceptOptions& o,
                                               const std::vector<std::string>& host_of_rank,
                                               const AcceptSinks& sinks) {
  measure::P2pOptions p;
  p.pattern = o.pattern;
  p.hubs = o.pattern_hubs;
  p.pattern_units = pattern_units(host_of_rank);
  p.sweep = measure::SweepSpec{.min_bytes = o.bw_bytes,
                               .max_bytes = o.bw_bytes,
                               .factor = 2,
                               .step_bytes = 0,
                               .explicit_bytes = {o.bw_bytes}};
  p.window = o.bw_window;
  p.bw_iters = o.bw_iters;
  p.warmup = o.warmup;
  p.timeout_s = o.timeout_s;
  p.nic_counters = o.nic_counters;
  if (sinks.phase && comm.rank() == 0) {
    sinks.phase(fmt::format("pattern {} over {} hosts (each host's first rank, UCX)",
                            measure::to_string(o.pattern), p.pattern_units.size()));
  }
  std::vector<measure::P2pRow> rows;
  measure::run_p2p(comm, p, [&](const std::vector<measure::P2pRow>& round) {
    rows.insert(rows.end(), round.begin(), round.end());
    if (sinks.p2p) sinks.p2p(round);
  });
  return rows;
}

}  // namespace ibscope::accept
