#include "ibscope/results/writer.hpp"

#include <fmt/format.h>

#include <cerrno>

#include "document_json.hpp"
#include "ibscope/build_info.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/random_hex.hpp"

namespace ibscope::results {

// Here rather than in document.cpp: the parsers (and their fuzz build) need no build stamp.
Document Document::start(std::string subcommand, std::vector<std::string> argv) {
  Document d;
  d.tool.version = build::kVersion;
  d.tool.git_sha = build::kGitSha;
  d.tool.build_type = build::kBuildType;
  d.command = Command{std::move(subcommand), std::move(argv)};
  d.started_utc = utc_now_iso8601();
  return d;
}

std::string to_text(const Document& doc) { return to_json(doc).dump(1) + "\n"; }

std::filesystem::path write(Document& doc, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw SystemError(fmt::format("cannot create results folder {}", dir.string()), ec.value());
  }
  doc.finished_utc = utc_now_iso8601();
  std::string stamp = doc.started_utc;
  std::erase(stamp, '-');
  std::erase(stamp, ':');
  const std::string content = to_text(doc);
  for (int attempt = 0;; ++attempt) {
    const auto path =
        dir / fmt::format("ibscope-{}-{}-{}.json", doc.command.subcommand, stamp, random_hex(6));
    try {
      write_file_exclusive(path, content);
      return path;
    } catch (const SystemError& e) {
      if (e.errno_value() != EEXIST || attempt >= 3) throw;
    }
  }
}

}  // namespace ibscope::results
