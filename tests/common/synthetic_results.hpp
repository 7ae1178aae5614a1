#pragma once
// A synthetic results document of a large job (issue 23, "Results at scale"), built through the
// typed Document as `ibscope accept` and `ibscope soak` fill it: hosts x ranks_per_host ranks
// (one GPU and one NIC each), their topology, an all-reduce sweep with every algorithm, an
// acceptance section (one rail-aligned link per rank, stragglers with every rank's arrival at
// every iteration) and a soak of a few windows (every rank's RSS per window). Pure code, no I/O:
// shared by tests/unit/test_results_scale.cpp and bench/results_scale_bench.cpp. The values are
// plausible (NDR InfiniBand, H100-like GPUs), deterministic, and measure nothing.

#include <cstdint>
#include <string>
#include <vector>

#include "ibscope/results/document.hpp"

namespace ibscope::testing {

struct SyntheticJob {
  int hosts = 1344;
  int ranks_per_host = 8;
  std::uint64_t min_bytes = 8, max_bytes = 8ULL << 30;  ///< sweep sizes, doubling
  std::vector<std::string> algorithms = {"ring", "rd", "rhd", "tree", "dbt"};
  int iterations = 20;             ///< timed calls per sweep row (ibscope's -n default)
  int straggler_rows = 4;          ///< acceptance all-reduce rows with arrivals
  int straggler_iterations = 20;   ///< iterations per such row
  int soak_windows = 4;            ///< window 0 is the warm-up
  bool keep_rank_samples = false;  ///< --keep-samples
  int ranks() const noexcept { return hosts * ranks_per_host; }
};

/// The document, complete and stamped (finished_utc set). Deterministic for a given job.
results::Document synthetic_results(const SyntheticJob& job);

}  // namespace ibscope::testing
