#pragma once
/// The "soak" section of a results file (`ibscope soak`; results/README.md): what was asked,
/// every window's cases as they closed, and the summary with the verdict once the soak ended
/// (absent while it runs: a soak that fails keeps its windows).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/measure/soak.hpp"

namespace ibscope::results {

struct SoakParams {
  std::string collective;
  int root = 0;
  std::optional<std::string> tuning_source;
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::vector<std::uint64_t> sizes_bytes;
  std::vector<std::string> types, ops, algorithms;
  std::uint64_t chunk_bytes = 0;
  double timeout_s = 0;
  std::string mem, mem_path;
  std::uint64_t stage_chunk_bytes = 0;
  bool in_place = false;
  bool verify_every_iteration = true;
  double duration_s = 0, window_s = 0;
  SoakThresholds thresholds;
};

struct Soak {
  SoakParams params;
  std::vector<SoakWindow> windows;
  std::optional<SoakSummary> summary;
};

}  // namespace ibscope::results
