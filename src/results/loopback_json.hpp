#pragma once
// The loopback section's JSON (results/loopback.hpp), for the acceptance section's preflight.

#include <nlohmann/json.hpp>
#include <string>

#include "field_reader.hpp"
#include "ibscope/results/loopback.hpp"

namespace ibscope::results {

nlohmann::json to_json(const Loopback& loopback);
Loopback read_loopback(const FieldReader& in, const nlohmann::json& j, const std::string& path);

}  // namespace ibscope::results
