// `ibscope baseline RUN.json... -o FILE`: a baseline of several results files, per link and per
// collective row, keyed by hardware (results/baseline.hpp; docs/baselines.md). Reads results
// files only; writes FILE atomically and never over an existing file.

#include <fmt/format.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/build_info.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

struct BaselineFlags {
  std::vector<std::string> files;
  std::string out;
  std::size_t min_runs = 3;
  bool allow_mixed = false;
};

constexpr const char* kBaselineFooter = R"(Examples:
  ibscope baseline results/accept/ibscope-accept-*.json -o fabric-baseline.json
  ibscope accept --baseline fabric-baseline.json          # judge a new run against it
  ibscope accept --baseline /usr/share/ibscope/baselines/connectx7-ndr400.json

Every file is loaded and checked first; the runs must share one hardware signature (NIC
driver, port speed and rate, link layer, GPU, hosts, transport) unless --allow-mixed. Each
accept link (host pair and NICs) and each collective row (collective, algorithm, type, size,
ranks) gets the median, MAD, spread (1.4826 x MAD), quartiles, min, max and n of its runs.
-o is written atomically and never replaces a file. Statistics and format: docs/baselines.md.
Exit status: 0 written, 1 FILE could not be written (it exists, or the folder refused), 2 usage
(a file unreadable or malformed, too few runs, mixed hardware; nothing is written).)";

int run_baseline(const BaselineFlags& f) {
  if (f.min_runs < 1) throw UsageError("--min-runs must be at least 1");
  std::vector<std::pair<std::string, results::Document>> runs;
  for (const auto& file : f.files) runs.emplace_back(file, results::load(file));
  results::Baseline b = results::build_baseline(
      runs, results::BaselineBuildOptions{.min_runs = f.min_runs, .allow_mixed = f.allow_mixed});
  b.tool_version = build::kVersion;
  b.git_sha = build::kGitSha;
  b.created_utc = results::utc_now_iso8601();
  try {
    results::write_baseline(b, f.out);
  } catch (const SystemError& e) {
    if (e.errno_value() != EEXIST) throw;
    throw SystemError(fmt::format("-o {}: exists already (a baseline is never replaced; choose "
                                  "another name); nothing written",
                                  f.out),
                      EEXIST);
  }
  fmt::print("ibscope baseline: {} from {} runs on {}{}: {} links, {} collective rows\n", f.out,
             b.runs.size(), b.hardware.describe(),
             b.mixed ? " (MIXED hardware: --allow-mixed)" : "", b.links.size(), b.rows.size());
  for (const auto& r : b.runs) {
    fmt::print("  used {} ({} started {})\n", r.path, r.subcommand, r.started_utc);
  }
  return 0;
}

}  // namespace

Command add_baseline_command(CLI::App& app) {
  auto flags = std::make_shared<BaselineFlags>();
  auto* sub = app.add_subcommand(
      "baseline",
      "A baseline of several results files (per accept link and collective row: median, MAD "
      "spread, quartiles, n), for 'ibscope accept --baseline'");
  sub->add_option("results", flags->files, "Results files of past runs (accept, collectives)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", flags->out,
                  "Write the baseline to FILE (written atomically, never over an existing file)")
      ->required()
      ->type_name("FILE");
  sub->add_option("--min-runs", flags->min_runs,
                  "Refuse to build a baseline of fewer runs than this")
      ->default_val(3);
  sub->add_flag("--allow-mixed", flags->allow_mixed,
                "Build a baseline of runs whose hardware signatures differ (marked mixed)");
  sub->footer(kBaselineFooter);
  return {sub, [flags]() -> int { return run_baseline(*flags); }};
}

}  // namespace ibscope::cli
