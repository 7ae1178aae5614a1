#pragma once
/// How a soak is shown: one table row per window and case as each window closes (nccl-tests
/// style, units in the headers), the drift and RSS summary with the verdict at the end, and the
/// "soak" section of the results file is results::Soak (results/soak.hpp).

#include <cstdio>
#include <span>

#include "ibscope/measure/soak.hpp"

namespace ibscope::output {

class SoakTable {
 public:
  explicit SoakTable(std::FILE* out) : out_(out) {}
  void header();
  /// The window's rows; RSS growth is against the first window given (window 0, warm-up).
  void window(const measure::SoakWindow& w);
  /// Drift per case, RSS growth per rank, #wrong and the verdict line.
  void summary(const measure::SoakSummary& s, const measure::SoakThresholds& t);

 private:
  std::FILE* out_;
  std::vector<std::uint64_t> base_rss_;
};

}  // namespace ibscope::output
