#pragma once
/// One run's results file, from the start of the run: its name is chosen when the run starts,
/// and until the run writes it, rank 0 keeps a checkpoint beside it (`<name>.json.partial`) that
/// it rewrites atomically after every batch of rows, and holds a lock (`<name>.json.lock`,
/// core/file_lock.hpp) that says the run is alive. A run that ends (completes, fails, is
/// interrupted) writes the results file, removes the checkpoint and releases the lock; a rank 0
/// that is killed (SIGKILL, the OOM killer) or crashes (an abort inside a library) leaves the
/// checkpoint, a valid results document with complete=false and error kind "unfinished" that
/// validate, report and fit read as it is and `ibscope recover` turns into a results file once
/// the lock is free (the kernel frees it when rank 0 dies). A rank 0 that cannot write its
/// results file (a full disk) makes the checkpoint say so. Results files are never overwritten
/// (core/atomic_file.hpp); the checkpoint, which is not one, is replaced.

#include <cstddef>
#include <filesystem>
#include <string>

#include "ibscope/core/file_lock.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::results {

/// The error kind of a checkpoint and of what `recover` makes of one.
inline constexpr std::string_view kUnfinishedKind = "unfinished";
/// A checkpoint's file name ends with this.
inline constexpr std::string_view kCheckpointSuffix = ".partial";
/// The run's lock file: the results file's name with this appended.
inline constexpr std::string_view kLockSuffix = ".lock";

/// Rows, probe rows, soak windows and acceptance links in `doc`: what a checkpoint holds.
std::size_t measured_rows(const Document& doc);

class ResultsFile {
 public:
  /// Chooses `<dir>/ibscope-<subcommand>-<started, compact>-<random>.json` for `doc` (creating
  /// `dir`), a name that no results file, checkpoint or lock file has yet. Throws SystemError.
  static ResultsFile reserve(const Document& doc, const std::filesystem::path& dir);

  /// The results file this run will write.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// Its checkpoint: path() + ".partial".
  std::filesystem::path checkpoint_path() const;
  /// The run's lock file: path() + ".lock".
  std::filesystem::path lock_path() const;

  /// Names the process that writes this file (`writer`, e.g. "pid 4242 on node017") in the
  /// checkpoints, the lock file and the errors, and takes the run's lock, held until write()
  /// has written the results file or this object is destroyed (the lock file is then removed):
  /// `recover` refuses a checkpoint whose lock is held. Call before the first checkpoint.
  /// Throws SystemError (the file system has no flock: a caller may go on unlocked; `writer`
  /// is kept all the same).
  void lock(std::string writer);

  /// Rewrites the checkpoint from `doc` (complete=false, error kind "unfinished"; the message
  /// names the writer, the number of rows and the time, and says that the run had not written
  /// its results file yet). Throws SystemError (the previous checkpoint then stays as it was).
  void checkpoint(const Document& doc);
  /// Stamps finished_utc, writes the results file (never over an existing file: a new name if
  /// path() was taken meanwhile), removes the checkpoint and releases the lock. Returns the path
  /// written. Throws SystemError when the results file cannot be written (a full disk): first it
  /// rewrites the checkpoint with every row and a message that says so, and the error names
  /// the results file, the system's reason and where the rows are (that checkpoint; if even it
  /// could not be written, the older checkpoint and its rows, or none).
  std::filesystem::path write(Document& doc);

 private:
  explicit ResultsFile(std::filesystem::path path) : path_(std::move(path)) {}
  /// "rank 0" and the writer.
  std::string rank0() const;
  void write_checkpoint(const Document& doc, const std::string& message);

  std::filesystem::path path_;
  std::string writer_;
  FileLock lock_;
  // The last checkpoint written: its rows and time ("" when none was).
  std::size_t checkpointed_rows_ = 0;
  std::string checkpointed_utc_;
};

/// What `ibscope recover` prints and writes.
struct Recovered {
  std::filesystem::path path;  ///< the results file written
  std::size_t rows = 0;        ///< measured_rows of it
};

/// The results file `recover` makes of `checkpoint` in `dir`: the checkpoint's name without
/// ".partial", with ".json" appended unless it ends so (`<name>.json.partial` -> `<name>.json`,
/// `x.partial` -> `x.json`). Throws UsageError when the name does not end in ".partial".
std::filesystem::path recovered_path(const std::filesystem::path& checkpoint,
                                     const std::filesystem::path& dir);

/// Turns a checkpoint (`<name>.json.partial`) into a results file: recovered_path() in `out_dir`
/// (empty: the checkpoint's folder), complete=false, error kind "unfinished" saying where it came
/// from; removes the run's lock file that its dead rank 0 left. The checkpoint stays. Throws
/// UsageError (not a checkpoint: another name, a complete run; malformed; the checkpoint of a run
/// that is still going: its rank 0 holds the lock beside it, named in the message) or
/// SystemError (the results file exists already: written or recovered before).
Recovered recover(const std::filesystem::path& checkpoint, const std::filesystem::path& out_dir);

}  // namespace ibscope::results
