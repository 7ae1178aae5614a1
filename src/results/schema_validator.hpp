#pragma once
// Private to src/results/: checks a parsed results document against the embedded JSON Schema
// (results/schema.hpp) with valijson.

#include <nlohmann/json.hpp>
#include <string_view>

namespace ibscope::results {

/// Throws UsageError "<source>: <path>: <what>" for the first violation, the path dotted as
/// results/README.md writes fields ("collectives.rows[3].busbw_gbps: expected a number, got
/// string"; "p2p.rows[0].bw: unknown field"; "tool.git_sha: missing"). A schema_version other
/// than kSupportedSchemaVersion is refused first, naming the version that is supported.
void validate_schema(const nlohmann::json& doc, std::string_view source);

/// The same for a baseline file (results/baseline.hpp): baseline_version first (a results file
/// given as a baseline is told so), then results/schema/ibscope-baseline-v1.schema.json.
void validate_baseline_schema(const nlohmann::json& doc, std::string_view source);

}  // namespace ibscope::results
