#pragma once
// Private to src/model/: a workload as JSON, both ways (the workload file format, docs/model.md),
// in workload_json.cpp, the one place that reads or writes a workload as JSON. The model document
// (documents.cpp) embeds it.

#include <nlohmann/json.hpp>
#include <string_view>

#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// Parses an already read document; `source` names it in messages. Throws UsageError.
Workload parse_workload(const nlohmann::json& doc, std::string_view source);
/// Keys in the order of docs/model.md.
nlohmann::ordered_json to_json(const Workload& w);

}  // namespace ibscope::model
