#include "ibscope/results/results_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "document_json.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/random_hex.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"

namespace ibscope::results {
namespace {

namespace fs = std::filesystem;

fs::path with_suffix(const fs::path& p, std::string_view suffix = kCheckpointSuffix) {
  return fs::path(p.string() + std::string(suffix));
}

bool taken(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() != fs::file_type::not_found;
}

fs::path fresh_name(const Document& doc, const fs::path& dir) {
  std::string stamp = doc.started_utc;
  std::erase(stamp, '-');
  std::erase(stamp, ':');
  for (int attempt = 0;; ++attempt) {
    fs::path p =
        dir / fmt::format("ibscope-{}-{}-{}.json", doc.command.subcommand, stamp, random_hex(6));
    if (!taken(p) && !taken(with_suffix(p)) && !taken(with_suffix(p, kLockSuffix))) return p;
    if (attempt >= 8) {
      throw SystemError(fmt::format("cannot find a free results file name in {}", dir.string()),
                        EEXIST);
    }
  }
}

}  // namespace

std::size_t measured_rows(const Document& doc) {
  std::size_t n = doc.collectives.rows.size() + doc.p2p.rows.size();
  if (doc.probes) n += doc.probes->rows.size();
  if (doc.soak) n += doc.soak->windows.size();
  if (doc.acceptance) n += doc.acceptance->links.size();
  return n;
}

ResultsFile ResultsFile::reserve(const Document& doc, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw SystemError(fmt::format("cannot create results folder {}", dir.string()), ec.value());
  }
  return ResultsFile(fresh_name(doc, dir));
}

fs::path ResultsFile::checkpoint_path() const { return with_suffix(path_); }

fs::path ResultsFile::lock_path() const { return with_suffix(path_, kLockSuffix); }

std::string ResultsFile::rank0() const {
  return writer_.empty() ? std::string("rank 0") : fmt::format("rank 0 ({})", writer_);
}

void ResultsFile::lock(std::string writer) {
  writer_ = std::move(writer);
  lock_ = FileLock::acquire(
      lock_path(), fmt::format("{} of the run that writes {}", rank0(), path_.filename().string()));
}

void ResultsFile::write_checkpoint(const Document& doc, const std::string& message) {
  nlohmann::json j = to_json(doc);
  j["complete"] = false;
  j["finished_utc"] = nullptr;
  j["error"] = {{"kind", kUnfinishedKind}, {"message", message}};
  write_file_replacing(checkpoint_path(), j.dump(1) + "\n");
}

void ResultsFile::checkpoint(const Document& doc) {
  const std::size_t rows = measured_rows(doc);
  const std::string now = utc_now_iso8601();
  // True whatever happens next: it says what was so when it was written, and what it means
  // if it is still there later (recover keeps the part before "; `ibscope recover").
  write_checkpoint(
      doc, fmt::format("{} had not written its results file yet: this checkpoint holds the {} rows "
                       "measured until {}. A run that ends writes {} and removes its checkpoint: "
                       "one that remains means that rank 0 stopped before (killed, out of memory "
                       "or crashed), or could not write the results file and said so on its "
                       "stderr; `ibscope recover {}` makes a results file of it",
                       rank0(), rows, now, path_.filename().string(), checkpoint_path().string()));
  checkpointed_rows_ = rows;
  checkpointed_utc_ = now;
}

fs::path ResultsFile::write(Document& doc) {
  doc.finished_utc = utc_now_iso8601();
  const std::string content = to_text(doc);
  fs::path written = path_;
  for (int attempt = 0;; ++attempt) {
    try {
      write_file_exclusive(written, content);
      break;
    } catch (const SystemError& e) {
      if (e.errno_value() == EEXIST && attempt < 3) {
        written = fresh_name(doc, path_.parent_path());
        continue;
      }
      // The rows' only copy on disk is now the checkpoint: bring it up to date with a message
      // that says what happened (it would otherwise say the run had not ended).
      const std::size_t rows = measured_rows(doc);
      const std::string ending = doc.complete || !doc.error
                                     ? std::string("complete")
                                     : fmt::format("{}: {}", doc.error->kind, doc.error->message);
      std::string where;
      try {
        write_checkpoint(
            doc, fmt::format("{} ended the run at {} ({}) but could not write its results file {} "
                             "({}): this checkpoint holds all {} rows it measured; `ibscope "
                             "recover {}` makes the results file of it",
                             rank0(), *doc.finished_utc, ending, path_.string(),
                             std::strerror(e.errno_value()), rows, checkpoint_path().string()));
        where = fmt::format(
            "all {} rows are in the checkpoint {}, which says so: `ibscope recover {}` makes the "
            "results file of it once the folder has room",
            rows, checkpoint_path().string(), checkpoint_path().string());
      } catch (const SystemError& c) {
        where = checkpointed_utc_.empty()
                    ? fmt::format(
                          "the checkpoint could not be written either ({}): the rows "
                          "are lost",
                          c.what())
                    : fmt::format(
                          "the checkpoint {} could not be updated either ({}): it holds "
                          "the {} rows measured until {}, of {}; `ibscope recover {}` "
                          "makes a results file of them",
                          checkpoint_path().string(), std::strerror(c.errno_value()),
                          checkpointed_rows_, checkpointed_utc_, rows, checkpoint_path().string());
      }
      throw SystemError(fmt::format("cannot write the results file {}", path_.string()),
                        e.errno_value(), where);
    }
  }
  std::error_code ec;
  fs::remove(checkpoint_path(), ec);  // the results file holds everything it held
  lock_.release();
  return written;
}

fs::path recovered_path(const fs::path& checkpoint, const fs::path& dir) {
  std::string name = checkpoint.filename().string();
  if (!name.ends_with(kCheckpointSuffix) || name.size() == kCheckpointSuffix.size()) {
    throw UsageError(fmt::format("{} is not an ibscope checkpoint: a checkpoint's name ends in {}",
                                 checkpoint.string(), kCheckpointSuffix));
  }
  name.resize(name.size() - kCheckpointSuffix.size());
  if (!name.ends_with(".json")) name += ".json";
  return dir / name;
}

Recovered recover(const fs::path& checkpoint, const fs::path& out_dir) {
  const fs::path dir = out_dir.empty() ? checkpoint.parent_path() : out_dir;
  const fs::path path = recovered_path(checkpoint, dir);
  // The run's lock beside the checkpoint: `<name>.json.lock` for `<name>.json.partial`.
  std::string stem = checkpoint.filename().string();
  stem.resize(stem.size() - kCheckpointSuffix.size());
  const fs::path lock = checkpoint.parent_path() / (stem + std::string(kLockSuffix));
  if (const auto holder = live_lock_holder(lock)) {
    throw UsageError(fmt::format(
        "{} is the checkpoint of a run that is still going: {} holds its lock {}; the run writes "
        "its own results file when it ends (recover a checkpoint only once its rank 0 is gone)",
        checkpoint.string(), *holder, lock.string()));
  }
  Document doc = load(checkpoint);
  if (doc.complete || !doc.error || doc.error->kind != kUnfinishedKind) {
    throw UsageError(fmt::format(
        "{} is not an ibscope checkpoint (a checkpoint has complete=false and error kind '{}')",
        checkpoint.string(), kUnfinishedKind));
  }
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) {
    throw SystemError(fmt::format("cannot create results folder {}", dir.string()), ec.value());
  }
  doc.error->message =
      fmt::format("recovered by `ibscope recover` from the checkpoint {}: {}", checkpoint.string(),
                  doc.error->message.substr(0, doc.error->message.find("; `ibscope recover")));
  try {
    write_file_exclusive(path, to_text(doc));
  } catch (const SystemError& e) {
    if (e.errno_value() != EEXIST) throw;
    throw SystemError(fmt::format("{} exists already (the run wrote it, or it was recovered "
                                  "before); nothing written",
                                  path.string()),
                      EEXIST);
  }
  fs::remove(lock, ec);  // free (its holder is gone): nothing will take it again
  return Recovered{path, measured_rows(doc)};
}

}  // namespace ibscope::results
