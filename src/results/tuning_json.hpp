#pragma once
// Private to src/results/: the "tuning" section (collectives/harness/tuning.hpp) as JSON.

#include <nlohmann/json.hpp>
#include <string>

#include "ibscope/collectives/harness/tuning.hpp"

namespace ibscope::results {

nlohmann::json to_json(const collectives::TuningTable& table);
/// kRecord: the table as the file holds it (a report of a file from another build reads it);
/// kSelect: for --tuning, where a collective or algorithm this build does not have is an error
/// too (messages then start with "--tuning").
enum class TuningUse { kRecord, kSelect };

/// Throws UsageError naming `source` and the field on anything malformed.
collectives::TuningTable tuning_from_json(const nlohmann::json& tuning, const std::string& source,
                                          TuningUse use = TuningUse::kSelect);

}  // namespace ibscope::results
