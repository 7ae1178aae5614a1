#pragma once
// Private to src/results/: the acceptance section's `congestion` member (schema
// $defs/accept_congestion), written by `ibscope accept --congestion`.

#include <nlohmann/json.hpp>
#include <string>

#include "field_reader.hpp"
#include "ibscope/results/acceptance.hpp"

namespace ibscope::results {

nlohmann::json to_json(const AcceptCongestion& c);
AcceptCongestion read_congestion(const FieldReader& in, const nlohmann::json& j,
                                 const std::string& path);

}  // namespace ibscope::results
