#include "ibscope/results/results_file.hpp"

#include <fmt/format.h>

#include <cerrno>
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

fs::path with_suffix(const fs::path& p) {
  return fs::path(p.string() + std::string(kCheckpointSuffix));
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
    if (!taken(p) && !taken(with_suffix(p))) return p;
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

void ResultsFile::checkpoint(const Document& doc) const {
  nlohmann::json j = to_json(doc);
  j["complete"] = false;
  j["finished_utc"] = nullptr;
  j["error"] = {
      {"kind", kUnfinishedKind},
      {"message",
       fmt::format("rank 0 stopped before it wrote its results (killed, out of memory or "
                   "crashed): this checkpoint holds the {} rows measured until {}; `ibscope "
                   "recover {}` makes a results file of it",
                   measured_rows(doc), utc_now_iso8601(), checkpoint_path().string())}};
  write_file_replacing(checkpoint_path(), j.dump(1) + "\n");
}

fs::path ResultsFile::write(Document& doc) const {
  doc.finished_utc = utc_now_iso8601();
  const std::string content = to_text(doc);
  fs::path written = path_;
  for (int attempt = 0;; ++attempt) {
    try {
      write_file_exclusive(written, content);
      break;
    } catch (const SystemError& e) {
      if (e.errno_value() != EEXIST || attempt >= 3) throw;
      written = fresh_name(doc, path_.parent_path());
    }
  }
  std::error_code ec;
  fs::remove(checkpoint_path(), ec);  // the results file holds everything it held
  return written;
}

Recovered recover(const fs::path& checkpoint, const fs::path& out_dir) {
  std::string name = checkpoint.filename().string();
  if (!name.ends_with(kCheckpointSuffix)) {
    throw UsageError(fmt::format("{} is not an ibscope checkpoint: a checkpoint's name ends in {}",
                                 checkpoint.string(), kCheckpointSuffix));
  }
  name.resize(name.size() - kCheckpointSuffix.size());
  Document doc = load(checkpoint);
  if (doc.complete || !doc.error || doc.error->kind != kUnfinishedKind) {
    throw UsageError(fmt::format(
        "{} is not an ibscope checkpoint (a checkpoint has complete=false and error kind '{}')",
        checkpoint.string(), kUnfinishedKind));
  }
  const fs::path dir = out_dir.empty() ? checkpoint.parent_path() : out_dir;
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) {
    throw SystemError(fmt::format("cannot create results folder {}", dir.string()), ec.value());
  }
  doc.error->message =
      fmt::format("recovered by `ibscope recover` from the checkpoint {}: {}", checkpoint.string(),
                  doc.error->message.substr(0, doc.error->message.find("; `ibscope recover")));
  const fs::path path = dir / name;
  try {
    write_file_exclusive(path, to_text(doc));
  } catch (const SystemError& e) {
    if (e.errno_value() != EEXIST) throw;
    throw SystemError(fmt::format("{} exists already (the run wrote it, or it was recovered "
                                  "before); nothing written",
                                  path.string()),
                      EEXIST);
  }
  return Recovered{path, measured_rows(doc)};
}

}  // namespace ibscope::results
