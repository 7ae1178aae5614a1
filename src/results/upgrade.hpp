#pragma once
/// Reading results files of an earlier schema version: the file's JSON is rewritten into the
/// current version's shape before it is checked against the schema, so that one schema and one
/// typed reader serve every version this ibscope reads (results/README.md, "Versions").
///
/// Version 1 -> 2 (issue 21): a collective row's `time_us` was the summary of per-call samples,
/// each the slowest rank's time for that call, and its mean was the reported time. It becomes
/// `iteration_us`; `time_us` becomes that mean, `iteration_rank` -1 (no single rank's calls),
/// `average` "max" (the nearest of nccl-tests' four), and the document gains a warning that
/// says so. Nothing else changed between the two versions.

#include <nlohmann/json.hpp>

namespace ibscope::results {

/// Rewrites `doc` in place when it is a well-formed enough version 1 file (an object whose
/// schema_version is 1); leaves anything else as it is for the schema check to judge.
void upgrade_to_current(nlohmann::json& doc);

}  // namespace ibscope::results
