#include "ibscope/results/writer.hpp"

#include <fmt/format.h>

#include "document_json.hpp"
#include "ibscope/build_info.hpp"
#include "ibscope/results/results_file.hpp"

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
  return ResultsFile::reserve(doc, dir).write(doc);
}

}  // namespace ibscope::results
