#pragma once
/// `ibscope accept` across the job: preflight from every host's topology; all-pairs latency and
/// bandwidth in n-1 rounds of disjoint pairs (verbs probes where every host has an ACTIVE RDMA
/// port, UCX otherwise); verdicts per link and host (accept/link_verdict.hpp) after suspect
/// links were measured again; then an all-reduce sweep per algorithm with per-rank arrival
/// times to name a straggler. Every rank calls it.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/accept/accept_options.hpp"
#include "ibscope/accept/loopback_verdict.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/results/acceptance.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::accept {

struct AcceptSinks {
  std::function<void(const std::vector<measure::P2pRow>&)> p2p;                ///< every rank
  std::function<void(const std::vector<measure::ProbeRow>&)> probe;            ///< rank 0 only
  std::function<void(const std::vector<measure::CollectiveRow>&)> collective;  ///< every rank
  std::function<void(std::string_view)> phase;  ///< rank 0: "all-pairs bandwidth ..." as it starts
  /// rank 0: every NIC's loopback verdict, once measured (not called with --no-loopback)
  std::function<void(const std::vector<LoopbackVerdict>&)> loopback;
};

struct AcceptResult {
  bool pass = false;                  ///< every rank gets rank 0's verdict
  results::Acceptance section;        ///< rank 0: the results file's "acceptance" section
  std::vector<std::string> failures;  ///< rank 0: one line per failed check, for the console
  std::vector<std::string> warnings;  ///< rank 0
};

/// `hosts`: the job's topology merged by host (job/topology_gather.hpp): whole on rank 0, each
/// host's name and ranks on the others (rank 0 judges the preflight and broadcasts its RDMA
/// verdict). Throws EnvironmentError when verbs are asked for and a host cannot run them,
/// UsageError, TimeoutError / RemoteError naming the stalled or lost rank.
AcceptResult run_accept(transport::Comm& comm, const std::vector<topo::HostTopology>& hosts,
                        const AcceptOptions& options, const AcceptSinks& sinks);

}  // namespace ibscope::accept
