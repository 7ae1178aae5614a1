#pragma once
/// Files written whole or not at all: results files, fits, reports, Prometheus textfiles.

#include <filesystem>
#include <string>

namespace ibscope {

/// Writes `content` to `path` atomically and exclusively: fails with SystemError(EEXIST) if the
/// path exists; a crash never leaves a partial file under `path`.
void write_file_exclusive(const std::filesystem::path& path, const std::string& content);

/// Writes `content` to `path` atomically, replacing what is there: a reader sees the old file or
/// the new one, never a partial one (a temp file in the same folder, fsync, rename). For files
/// that are meant to be replaced (a Prometheus textfile, a generated man page), never results.
/// Throws SystemError.
void write_file_replacing(const std::filesystem::path& path, const std::string& content);

}  // namespace ibscope
