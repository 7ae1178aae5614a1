#pragma once
/// Reads results files: parse, check against the JSON Schema (schema.hpp, the single source of
/// truth), then build the typed Document. Every problem is a UsageError (exit status 2) that
/// names the file and the JSON path of the offending field, e.g.
///   "results/x.json: /collectives/rows/3/time_us/p50: expected number, got string".

#include <filesystem>
#include <string_view>

#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::results {

/// Reads, validates and types `path`: a results file, or nccl-tests' stdout (decided by content;
/// results/nccl_tests.hpp), which gives a document of collective rows. Throws UsageError
/// (NcclTestsParseError, with line and column, for malformed nccl-tests output).
Document load(const std::filesystem::path& path);
/// The same for a results file's text (JSON only); `source` names it in messages. Throws
/// UsageError.
Document parse(std::string_view text, std::string_view source);
/// The tuning table saved in a results file by a sweep of several algorithms (-A all).
/// Throws UsageError when the file is malformed or has no table.
collectives::TuningTable load_tuning(const std::filesystem::path& path);

}  // namespace ibscope::results
