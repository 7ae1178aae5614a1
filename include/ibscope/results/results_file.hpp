#pragma once
/// One run's results file, from the start of the run: its name is chosen when the run starts,
/// and until the run writes it, rank 0 keeps a checkpoint beside it (`<name>.partial`) that it
/// rewrites atomically after every row. A run that ends (completes, fails, is interrupted)
/// writes the results file and removes the checkpoint; a rank 0 that is killed (SIGKILL, the
/// OOM killer) or crashes (an abort inside a library) leaves the checkpoint, a valid results
/// document with complete=false and error kind "unfinished" that validate, report and fit read
/// as it is and `ibscope recover` turns into a results file. Results files are never
/// overwritten (core/atomic_file.hpp); the checkpoint, which is not one, is replaced.

#include <cstddef>
#include <filesystem>
#include <string>

#include "ibscope/results/document.hpp"

namespace ibscope::results {

/// The error kind of a checkpoint and of what `recover` makes of one.
inline constexpr std::string_view kUnfinishedKind = "unfinished";
/// A checkpoint's file name ends with this.
inline constexpr std::string_view kCheckpointSuffix = ".partial";

/// Rows, probe rows, soak windows and acceptance links in `doc`: what a checkpoint holds.
std::size_t measured_rows(const Document& doc);

class ResultsFile {
 public:
  /// Chooses `<dir>/ibscope-<subcommand>-<started, compact>-<random>.json` for `doc` (creating
  /// `dir`), a name that neither a results file nor a checkpoint has yet. Throws SystemError.
  static ResultsFile reserve(const Document& doc, const std::filesystem::path& dir);

  /// The results file this run will write.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// Its checkpoint: path() + ".partial".
  std::filesystem::path checkpoint_path() const;

  /// Rewrites the checkpoint from `doc` (complete=false, error kind "unfinished", the time and
  /// the number of rows in the message). Throws SystemError.
  void checkpoint(const Document& doc) const;
  /// Stamps finished_utc, writes the results file (never over an existing file: a new name if
  /// path() was taken meanwhile) and removes the checkpoint. Returns the path written. Throws
  /// SystemError (the checkpoint then stays).
  std::filesystem::path write(Document& doc) const;

 private:
  explicit ResultsFile(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

/// What `ibscope recover` prints and writes.
struct Recovered {
  std::filesystem::path path;  ///< the results file written
  std::size_t rows = 0;        ///< measured_rows of it
};

/// Turns a checkpoint (`<name>.json.partial`) into a results file: `<name>.json` in `out_dir`
/// (empty: the checkpoint's folder), complete=false, error kind "unfinished" saying where it came
/// from. The checkpoint stays. Throws UsageError (not a checkpoint: another name, a complete run;
/// malformed) or SystemError (the results file exists already: written or recovered before).
Recovered recover(const std::filesystem::path& checkpoint, const std::filesystem::path& out_dir);

}  // namespace ibscope::results
