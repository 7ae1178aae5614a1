#pragma once
/// Files written whole or not at all: results files, fits, reports, Prometheus textfiles.

#include <filesystem>
#include <string>

namespace ibscope {

/// Writes `content` to `path` atomically and exclusively: fails with SystemError(EEXIST) if the
/// path exists; a crash never leaves a partial file under `path`. Durable once it returns: a temp
/// file in the same folder, fsync, link() to `path`, then an fsync of the folder, so that a crash
/// of the host cannot lose the name either (where the file system can fsync a folder at all).
/// Throws SystemError (the folder's fsync failed: it names the folder, and `path` is removed
/// again); on any error nothing is left under `path`.
void write_file_exclusive(const std::filesystem::path& path, const std::string& content);

/// Writes `content` to `path` atomically, replacing what is there: a reader sees the old file or
/// the new one, never a partial one (a temp file in the same folder, fsync, rename, then an fsync
/// of the folder). For files that are meant to be replaced (a checkpoint, a Prometheus textfile,
/// a generated man page), never results. Throws SystemError (the folder's fsync failed: it names
/// the folder; the new content is then in place but may not survive a crash of the host).
void write_file_replacing(const std::filesystem::path& path, const std::string& content);

}  // namespace ibscope
