#pragma once
/// The collective measurement: for each type, op and size of the sweep, and for each algorithm
/// side by side, a verified run (-c) and then warm-up (by time, then -w calls) + timed iterations,
/// out-of-place and in-place, reported as nccl-tests rows (time, algbw, busbw, #wrong:
/// measure/time_average.hpp).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/misplace.hpp"
#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/measure/sweep.hpp"
#include "ibscope/memory/mem_path.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::collectives {

/// The pseudo-algorithm that picks per size (tuning.hpp).
inline constexpr std::string_view kAutoAlgorithm = "auto";

struct CollectiveSweepOptions {
  Collective collective = Collective::kAllreduce;
  measure::SweepSpec sweep{.min_bytes = 8,
                           .max_bytes = 128ULL << 20,
                           .factor = 2,
                           .step_bytes = 0,
                           .explicit_bytes = {}};
  int iters = 20;
  int warmup = 5;
  /// Warm-up floor (measure/warm_up.hpp): before the `warmup` calls, calls in rounds that rank 0
  /// agrees until this many seconds have passed; 0: the count alone.
  double warmup_min_s = 0.002;
  measure::TimeAverage average =
      measure::TimeAverage::kMean;  ///< nccl-tests' -a: how ranks' times combine
  bool check = true;
  bool out_of_place = true;
  bool in_place = true;
  std::vector<DataType> types{DataType::kFloat32};
  std::vector<ReduceOp> ops{ReduceOp::kSum};  ///< ignored by collectives that do not reduce
  /// Names from the registry, or kAutoAlgorithm; with several, each size runs them in turn.
  std::vector<std::string> algorithms{"ring"};
  /// The list is "all" (or a command's default), not names the user chose: an algorithm that
  /// cannot run on this job (hier on device memory or on ranks not placed in blocks per host)
  /// is left out with a warning instead of failing the run with a usage error.
  bool skip_unavailable = false;
  AlgorithmOptions algorithm_options;  ///< its memory: where the buffers live (--mem)
  memory::MemPath mem_path = memory::MemPath::kHost;  ///< how they meet UCX (the rows' label)
  /// What the command line asked for; the CLI turns it into the two fields above per rank.
  memory::MemoryRequest memory_request;
  int root = 0;  ///< broadcast
  /// alltoallv: how each rank's bytes spread over the ranks (--counts); each size scales it to
  /// that mean per rank. Null: uniform.
  std::shared_ptr<const CountsSpec> counts;
  std::optional<TuningTable> tuning;  ///< for auto; the default rule when none matches
  double timeout_s = 60;
  /// Keep, per row, when each rank entered each timed iteration (CollectiveRow::enter_s), for
  /// straggler attribution (accept/straggler.hpp). Costs one allgather per row.
  bool record_arrivals = false;
  /// Read each host's NIC counters around every row (CollectiveRow::nic_counters): two readings
  /// on each host's first rank and one gather to rank 0 per row, outside the timed loop.
  bool nic_counters = true;
  measure::SweepProgress progress;  ///< optional; called before each (algorithm, type, op, size)
};

/// Rows measured for one (algorithm, type, op, size): out-of-place and/or in-place. Called on
/// every rank with identical content, in sweep order.
using CollectiveRowsSink = std::function<void(const std::vector<measure::CollectiveRow>&)>;

/// Runs the sweep across all ranks of `comm`. Throws on a failed peer or a deadline; #wrong is
/// reported in the rows, not thrown.
void run_collective_sweep(transport::Comm& comm, const CollectiveSweepOptions& options,
                          const CollectiveRowsSink& sink);

/// The fault hooks of the sweeps (docs/fault-hooks.md). Each value is parsed as a flag is: a
/// malformed one (an empty one too) is a UsageError naming the variable and what it expects.

/// Test hook: IBSCOPE_FAULT_CORRUPT_RANK=<rank> makes that rank flip one element of its result
/// after each verification run, as a bit flip on the wire would; #wrong must then be non-zero.
/// -1 when unset.
int parse_fault_corrupt_rank(std::string_view value);
int fault_corrupt_rank_from_env();

/// Test hook: IBSCOPE_FAULT_DELAY_RANK=<rank>:<us> makes that rank sleep before entering each
/// timed iteration, as a rank whose compute runs late would: a straggler with a known name.
struct FaultDelay {
  int rank = -1;  ///< -1: unset
  double us = 0;
};
FaultDelay parse_fault_delay(std::string_view value);
FaultDelay fault_delay_from_env();

/// Test hook: IBSCOPE_FAULT_MISPLACE=<rank>:<fault> (a misplace::name_of() name, e.g.
/// swap-blocks) makes that rank move data in its result after each verification run of the
/// sweep, as a wrong block index or offset in an algorithm would (misplace_output()); #wrong
/// must then be non-zero. Nullopt when unset.
struct FaultMisplace {
  int rank = -1;
  misplace::Fault fault = misplace::Fault::kSwapBlocks;
};
FaultMisplace parse_fault_misplace(std::string_view value);
std::optional<FaultMisplace> fault_misplace_from_env();

/// Parses the three hooks above from this process's environment and checks their ranks against
/// the job's `job_ranks`: a rank the job does not have is a UsageError too.
void check_collective_fault_hooks(int job_ranks);

}  // namespace ibscope::collectives
