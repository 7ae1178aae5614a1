#pragma once
/// Console output of `ibscope probe`: the ports each rank uses, one line per (pair, size) as
/// perftest prints them, and for several pairs a rank x rank matrix at the largest size.

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ibscope/measure/records.hpp"
#include "ibscope/probes/probe_runner.hpp"
#include "ibscope/probes/probe_test.hpp"

namespace ibscope::output {

class ProbeTable {
 public:
  ProbeTable(std::FILE* out, const probes::ProbeTest& test, int ranks)
      : out_(out), test_(test), ranks_(ranks) {}
  void ports(const std::vector<probes::RankPort>& ports, const std::vector<std::string>& hosts);
  void rows(const std::vector<measure::ProbeRow>& rows);
  /// The matrix (when more than one pair ran).
  void footer();

 private:
  bool latency() const noexcept { return test_.metric == probes::Metric::kLatency; }
  void header();

  std::FILE* out_;
  const probes::ProbeTest& test_;
  int ranks_;
  bool header_done_ = false;
  std::uint64_t largest_ = 0;
  std::map<std::pair<int, int>, std::map<std::uint64_t, double>> figures_;  // pair -> size -> value
};

}  // namespace ibscope::output
