#pragma once
/// Reads and validates a results file against schema version 1 (results/README.md,
/// results/schema/ibscope-results-v1.schema.json). Every problem is a UsageError that names the
/// file and the JSON path of the offending field, e.g.
///   "results/x.json: collectives.rows[3].time_us.p50: expected a number, got string".

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "ibscope/collectives/harness/tuning.hpp"

namespace ibscope {

/// Parses and validates; throws UsageError (exit status 2) on anything malformed.
nlohmann::json load_results(const std::filesystem::path& path);
/// Parses and validates a results file's text; `source` names it in messages. UsageError.
nlohmann::json parse_results(std::string_view text, std::string_view source);
/// Validates an already parsed document; `source` names it in messages.
void validate_results(const nlohmann::json& doc, std::string_view source);
/// The tuning table (collectives/harness/tuning.hpp) saved in a results file by an `-A all` sweep.
/// Throws UsageError when the file is malformed or has no table.
TuningTable load_tuning(const std::filesystem::path& path);

}  // namespace ibscope
