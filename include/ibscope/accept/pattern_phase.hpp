#pragma once
/// The --pattern phase of `ibscope accept` and of `ibscope run`'s suite (cli/run_phases.hpp).
/// Each host's first rank stands for its host (units are hosts in the order of their first
/// rank); every rank computes the rounds from the pattern (measure/pattern_p2p.hpp) and the
/// rows go to rank 0 and to sinks.p2p.

#include <string>
#include <vector>

#include "ibscope/accept/accept_runner.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::accept {

/// Each host's first rank, hosts in the order of their first rank: the pattern's units.
std::vector<int> pattern_units(const std::vector<std::string>& host_of_rank);

/// Throws UsageError when o.pattern does not fit the job's hosts (incast:K with K >= hosts,
/// ...): called before any traffic.
void validate_pattern_for_hosts(const AcceptOptions& o,
                                const std::vector<std::string>& host_of_rank);

/// Collective. Rank 0 gets every flow's row (other ranks: none). Throws UsageError for a
/// pattern that does not fit the hosts (incast:K with K >= hosts, ...).
std::vector<measure::P2pRow> run_pattern_phase(transport::Comm& comm, const AcceptOptions& o,
                                               const std::vector<std::string>& host_of_rank,
                                               const AcceptSinks& sinks);

}  // namespace ibscope::accept
