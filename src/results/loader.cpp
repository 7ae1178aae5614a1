#include "ibscope/results/loader.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "document_json.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/nccl_tests.hpp"
#include "schema_validator.hpp"
#include "tuning_json.hpp"
#include "upgrade.hpp"

namespace ibscope::results {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(
        fmt::format("{}: cannot open results file: {}", path.string(), std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Parses, upgrades an earlier version, and checks against the schema (the single source of
/// truth). UsageError.
nlohmann::json checked_json(std::string_view text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number too large for a double (1e400).
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  upgrade_to_current(doc);
  validate_schema(doc, source);
  return doc;
}

}  // namespace

Document parse(std::string_view text, std::string_view source) {
  // The typed reader then checks what a schema cannot say (ranks unique across hosts, integers
  // that fit their field).
  return document_from_json(checked_json(text, source), source);
}

Document load(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  // By content, not by name: nccl-tests' stdout is text with a '#' banner, a results file JSON.
  if (looks_like_nccl_tests(text)) {
    return to_document(parse_nccl_tests(text, path.string()), path.string());
  }
  if (looks_like_nccl_tests_json(text)) {
    return to_document(parse_nccl_tests_json(text, path.string()), path.string());
  }
  return parse(text, path.string());
}

collectives::TuningTable load_tuning(const std::filesystem::path& path) {
  const auto doc = checked_json(read_text(path), path.string());
  (void)document_from_json(doc, path.string());
  if (!doc.contains("tuning") || doc["tuning"].is_null()) {
    throw UsageError(
        fmt::format("--tuning {}: this results file has no tuning table (one is "
                    "written by a sweep of several algorithms, e.g. -A all)",
                    path.string()));
  }
  return tuning_from_json(doc["tuning"], path.string(), TuningUse::kSelect);
}

}  // namespace ibscope::results
