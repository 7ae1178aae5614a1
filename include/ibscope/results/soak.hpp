#pragma once
/// The "soak" section of a results file (`ibscope soak`; results/README.md): what was asked,
/// every window's cases as they closed, and the summary with the verdict once the soak ended
/// (absent while it runs: a soak that fails keeps its windows).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/measure/soak.hpp"
#include "ibscope/results/params.hpp"
#include "ibscope/results/rank_samples.hpp"

namespace ibscope::results {

/// What the soak was asked: the collective set-up every collective run records, and the soak's own.
struct SoakParams : CollectiveSetup {
  std::vector<std::uint64_t> sizes_bytes;
  bool in_place = false;
  bool verify_every_iteration = true;
  double duration_s = 0, window_s = 0;
  measure::SoakThresholds thresholds;
};

struct Soak {
  SoakParams params;
  std::vector<measure::SoakWindow> windows;
  std::optional<measure::SoakSummary> summary;
  /// Read from a file of a large job that summarised each window's rss_bytes (then empty):
  /// one per window, in the order of `windows`. Empty otherwise.
  std::vector<RssSummary> window_rss = {};
};

}  // namespace ibscope::results
