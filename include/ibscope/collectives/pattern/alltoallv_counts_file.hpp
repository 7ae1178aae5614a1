#pragma once
/// The counts file of `ibscope alltoallv --counts FILE` (docs/methodology.md "All-to-all-v"):
/// text, one row per sender, p numbers each (what that rank sends to ranks 0..p-1: element
/// counts or relative weights, scaled to each size either way), separated by spaces, tabs or
/// commas. Blank lines and lines starting with '#' are skipped. Numbers are finite and >= 0,
/// not all 0; every row has as many numbers as there are rows.

#include <string>
#include <string_view>

#include "ibscope/collectives/pattern/alltoallv_counts.hpp"

namespace ibscope::collectives {

/// Parses the file's text; `source` names it in errors. Throws UsageError
/// "<source>:<line>:<column>: <what is wrong>".
CountsSpec parse_counts_matrix(std::string_view text, std::string_view source);

/// --counts: a generator (parse_counts_generator) or the path of a counts file, read and
/// parsed. Throws UsageError for a malformed spec, an unreadable file or a bad matrix.
CountsSpec load_counts_spec(const std::string& text);

}  // namespace ibscope::collectives
