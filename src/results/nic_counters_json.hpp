#pragma once
// Private to src/results/: the `nic_counters` member of collective, p2p and probe rows (schema
// $defs/nic_counters): each host NIC's counter growth over the row (fabric/counters.hpp).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "field_reader.hpp"
#include "ibscope/fabric/counters.hpp"

namespace ibscope::results {

/// Writes `nic_counters` into `row` when there are any. `summarise` (a job above
/// kRankSamplesKeptUpToRanks ranks, results/rank_samples.hpp): only the NICs whose errors,
/// congestion, flaps or other counters moved (or that appeared or vanished) are listed, and the
/// rest's traffic is one summary, `nic_traffic`.
void put_nic_counters(nlohmann::json& row, const std::vector<fabric::NicDelta>& deltas,
                      bool summarise);
/// The row's `nic_counters` (empty when absent: files before the member).
std::vector<fabric::NicDelta> read_nic_counters(const FieldReader& in, const nlohmann::json& row,
                                                const std::string& path);

}  // namespace ibscope::results
