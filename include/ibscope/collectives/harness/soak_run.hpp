#pragma once
/// The soak: the same collectives again and again for a wall-clock duration, every iteration
/// verified, reported per window of time (measure/soak.hpp). Rank 0's clock decides when a
/// window closes and when the soak stops; every rank learns it in the one exchange that ends
/// each batch of iterations, so all ranks run exactly the same number of collectives.

#include <cstdint>
#include <functional>
#include <vector>

#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/measure/soak.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::collectives {

struct SoakOptions {
  /// What runs: the collective, its types, ops, algorithms (several: each in turn; auto: picked
  /// per size once), the sizes (sweep), memory, chunk and the deadline of each call. Its iters,
  /// warm-up, check and in-place fields are not used: the soak verifies every iteration of
  /// every case, out of place.
  CollectiveSweepOptions collective;
  double duration_s = 600;
  double window_s = 30;
  measure::SoakThresholds thresholds;
};

/// Called on every rank with identical content as each window closes, in order.
using SoakWindowSink = std::function<void(const measure::SoakWindow&)>;

/// Runs the soak across all ranks of `comm` and returns its windows. Throws on a failed peer or
/// a deadline; #wrong is counted in the windows, not thrown.
std::vector<measure::SoakWindow> run_soak(transport::Comm& comm, const SoakOptions& options,
                                          const SoakWindowSink& sink);

/// Test hook, for proving that the RSS check can fail:
/// IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S=<size> makes every rank allocate, touch and keep
/// that many bytes per second of the soak loop. 0 when unset; UsageError when malformed.
std::uint64_t soak_leak_bytes_per_s_from_env();

}  // namespace ibscope::collectives
