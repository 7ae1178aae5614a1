#pragma once
// Private to src/results/: the "acceptance" and "soak" sections as JSON, both ways (one to_json
// and one reader per section). NaN figures are written as null and read back as NaN.

#include <nlohmann/json.hpp>
#include <string_view>

#include "ibscope/results/acceptance.hpp"
#include "ibscope/results/soak.hpp"

namespace ibscope::results {

nlohmann::json to_json(const Acceptance& a);
Acceptance acceptance_from_json(const nlohmann::json& j, std::string_view source);

nlohmann::json to_json(const Soak& s);
Soak soak_from_json(const nlohmann::json& j, std::string_view source);

}  // namespace ibscope::results
