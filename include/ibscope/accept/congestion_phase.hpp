#pragma once
/// The congestion phase of `ibscope accept --congestion` over the job's communicator
/// (accept/congestion.hpp says what it measures and how it judges). Every rank calls it; the
/// victims measure alone, then under each congestor in turn while the congestors load the
/// network, and the figures are gathered to rank 0 (O(victims x iterations) there).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/accept/congestion.hpp"
#include "ibscope/results/acceptance.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::accept {

struct CongestionPhaseSpec {
  CongestionOptions options;
  std::uint64_t latency_bytes = 8;  ///< --lat-size
  int latency_iters = 200;          ///< --lat-iters
  int allreduce_iters = 20;         ///< --ar-iters
  int warmup = 2;                   ///< --warmup
  double timeout_s = 60;            ///< every wait; the victims' whole window too
};

/// Rank 0: the section and one failure line per metric over its threshold; other ranks: an
/// empty section. `host_of_rank`: every rank's host, on every rank. `phase` (rank 0, may be
/// empty) hears each window as it starts. Throws UsageError (a split that cannot work),
/// TimeoutError / RemoteError naming the stalled or lost rank and its host, VerificationError.
struct CongestionResult {
  results::AcceptCongestion section;
  std::vector<std::string> failures;
};
CongestionResult run_congestion_phase(transport::Comm& comm,
                                      const std::vector<std::string>& host_of_rank,
                                      const CongestionPhaseSpec& spec,
                                      const std::function<void(std::string_view)>& phase);

}  // namespace ibscope::accept
