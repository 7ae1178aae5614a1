#pragma once
/// The results file's JSON Schema (results/schema/ibscope-results-v2.schema.json), embedded in
/// the binary at build time (cmake/EmbedResultsSchema.cmake). It is the single source of truth
/// for what a results file may contain: `ibscope validate` and every loader check files against
/// it (results/loader.hpp) before reading them.

#include <string_view>

namespace ibscope::results {

/// The schema version this ibscope writes and reads. Files of version 1 are read by upgrading
/// them first (upgrade.hpp); files of any other version are refused with a message that names
/// this one.
inline constexpr int kSupportedSchemaVersion = 2;

/// The schema's JSON text, as in results/schema/ at build time. Never throws.
std::string_view schema_text();

}  // namespace ibscope::results
