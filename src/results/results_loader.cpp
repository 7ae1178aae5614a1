#include "ibscope/output/results_loader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ibscope/core/error.hpp"
#include "ibscope/output/results_document.hpp"
#include "ibscope/results/schema.hpp"
#include "ibscope/topo/topology_json.hpp"
#include "schema_validator.hpp"

namespace ibscope {

static_assert(kResultsSchemaVersion == results::kSupportedSchemaVersion,
              "the writer's version is the version the schema describes");

void validate_results(const nlohmann::json& doc, std::string_view source) {
  // The schema is the single source of truth (results/schema/); the topology reader then checks
  // what a schema cannot say (e.g. ranks unique across hosts) as it builds the typed section.
  results::validate_schema(doc, source);
  if (doc.contains("topology")) topo::topology_from_section_json(doc["topology"], source);
}

nlohmann::json load_results(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(
        fmt::format("{}: cannot open results file: {}", path.string(), std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_results(text.str(), path.string());
}

nlohmann::json parse_results(std::string_view text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number too large for a double (1e400).
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  validate_results(doc, source);
  return doc;
}

TuningTable load_tuning(const std::filesystem::path& path) {
  const auto doc = load_results(path);
  if (!doc.contains("tuning") || doc["tuning"].is_null()) {
    throw UsageError(
        fmt::format("--tuning {}: this results file has no tuning table (one is "
                    "written by a sweep of several algorithms, e.g. -A all)",
                    path.string()));
  }
  return tuning_from_json(doc["tuning"], path.string());
}

}  // namespace ibscope
