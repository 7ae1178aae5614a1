#pragma once
/// The all-reduce measurement: for each algorithm, type, op and size of the sweep, a verified
/// run (-c) and then warm-up + timed iterations, out-of-place and in-place, reported as
/// nccl-tests rows (time = max over ranks, algbw, busbw, #wrong).

#include <functional>
#include <string>
#include <vector>

#include "ibscope/collectives/allreduce.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/measure/sweep.hpp"

namespace ibscope {

struct AllreduceSweepOptions {
  SweepSpec sweep{.min_bytes = 8, .max_bytes = 128ULL << 20, .factor = 2, .step_bytes = 0,
                  .explicit_bytes = {}};
  int iters = 20;
  int warmup = 5;
  bool check = true;
  bool out_of_place = true;
  bool in_place = true;
  std::vector<DataType> types{DataType::kFloat32};
  std::vector<ReduceOp> ops{ReduceOp::kSum};
  std::vector<std::string> algorithms{"ring"};
  AlgorithmOptions algorithm_options;
  double timeout_s = 60;
};

/// Rows measured for one (algorithm, type, op, size): out-of-place and/or in-place. Called on
/// every rank with identical content, in sweep order.
using CollectiveRowsSink = std::function<void(const std::vector<CollectiveRow>&)>;

/// Runs the sweep across all ranks of `comm`. Throws on a failed peer or a deadline; #wrong is
/// reported in the rows, not thrown.
void run_allreduce_sweep(ucx::Comm& comm, const AllreduceSweepOptions& options,
                         const CollectiveRowsSink& sink);

/// Test hook: IBSCOPE_FAULT_CORRUPT_RANK=<rank> makes that rank flip one element of its result
/// after each verification run, as a bit flip on the wire would; #wrong must then be non-zero.
int fault_corrupt_rank_from_env();

}  // namespace ibscope
