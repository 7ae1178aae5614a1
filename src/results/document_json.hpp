#pragma once
// Private to src/results/: the Document as JSON, both ways. Each section has exactly one
// to_json and one reader here (topology_json.hpp and tuning_json.hpp hold theirs). The reader
// runs after the schema check (loader.cpp), so it trusts the types the schema fixes; a value
// the schema leaves open and the type cannot hold (an int out of range) is a UsageError that
// names the source and the field.

#include <nlohmann/json.hpp>
#include <string_view>

#include "field_reader.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::results {

nlohmann::json to_json(const Document& doc);
Document document_from_json(const nlohmann::json& j, std::string_view source);

nlohmann::json to_json(const measure::Stats& s);
measure::Stats read_stats(const FieldReader& in, const nlohmann::json& j, const std::string& path);
/// The collective set-up a sweep's and a soak's params share (the rest is each section's own).
nlohmann::json to_json(const CollectiveSetup& p);
void read_collective_setup(const FieldReader& in, const nlohmann::json& j, const std::string& p,
                           CollectiveSetup& out);
nlohmann::json to_json(const measure::CollectiveRow& row);
nlohmann::json to_json(const measure::P2pRow& row);
nlohmann::json to_json(const measure::ProbeRow& row);

}  // namespace ibscope::results
