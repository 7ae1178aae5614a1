#pragma once
// Private to src/results/: the `patterns` member of the acceptance section (accept --pattern).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "field_reader.hpp"
#include "ibscope/results/accept_pattern.hpp"

namespace ibscope::results {

nlohmann::json to_json(const std::vector<AcceptPattern>& patterns);
/// The section's `patterns` (empty when absent).
std::vector<AcceptPattern> read_accept_patterns(const FieldReader& in, const nlohmann::json& j,
                                                const std::string& path);

}  // namespace ibscope::results
