#pragma once
/// Writes results files: `<dir>/ibscope-<subcommand>-<UTC time>-<random>.json`, atomically and
/// never over an existing file (core/atomic_file.hpp). A run that fails is still written, with
/// "complete": false and the error.

#include <filesystem>
#include <string>

#include "ibscope/results/document.hpp"

namespace ibscope::results {

/// The document as the file's JSON text (indent 1, trailing newline).
std::string to_text(const Document& doc);
/// Stamps finished_utc and writes the file under `dir` (created if missing). Returns its path.
/// Throws SystemError.
std::filesystem::path write(Document& doc, const std::filesystem::path& dir);

}  // namespace ibscope::results
