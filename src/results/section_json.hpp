#pragma once
// Private to src/results/: the "acceptance" and "soak" sections as JSON, both ways (one to_json
// and one reader per section). NaN figures are written as null and read back as NaN.

#include <nlohmann/json.hpp>
#include <string_view>

#include "ibscope/results/acceptance.hpp"
#include "ibscope/results/soak.hpp"

namespace ibscope::results {

/// `keep_rank_samples` false: the straggler arrivals of a job of more than
/// kRankSamplesKeptUpToRanks ranks are written as per-iteration summaries (rank_samples.hpp).
nlohmann::json to_json(const Acceptance& a, bool keep_rank_samples = true);
Acceptance acceptance_from_json(const nlohmann::json& j, std::string_view source);

/// `keep_rank_samples` false: the windows' RSS of more than kRankSamplesKeptUpToRanks ranks is
/// written as a summary per window.
nlohmann::json to_json(const Soak& s, bool keep_rank_samples = true);
Soak soak_from_json(const nlohmann::json& j, std::string_view source);

}  // namespace ibscope::results
