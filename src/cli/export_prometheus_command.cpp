// `ibscope export-prometheus RESULTS... [-o FILE]`: the acceptance verdicts of the newest
// `ibscope accept` results file as Prometheus metrics for node-exporter's textfile collector
// (output/prometheus.hpp; docs/acceptance.md, "Prometheus"). Reads results files only.

#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/output/prometheus.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

struct ExportFlags {
  std::vector<std::string> files;
  std::string out;
};

constexpr const char* kExportFooter = R"(Examples:
  ibscope export-prometheus results/accept/ibscope-accept-20261203T101500Z-1a2b3c.json
  ibscope export-prometheus results/accept/*.json -o /var/lib/node_exporter/textfile/ibscope.prom
  ibscope accept --prometheus-file /var/lib/node_exporter/textfile/ibscope.prom  # every run

The newest of the files (by finished_utc) is exported; every file must be an 'ibscope accept'
results file. -o replaces FILE atomically (a temp file in its folder, then rename), so the
collector never reads half a file. Metrics and alerts: docs/acceptance.md.
Exit status: 0 written, 1 FILE could not be written, 2 usage (a file unreadable, malformed or
without an acceptance section; nothing is written).)";

// "2026-12-03T10:15:00Z" -> Unix time.
double unix_time(const std::string& iso, const std::string& where) {
  std::tm tm{};
  char z = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7 ||
      z != 'Z') {
    throw UsageError(
        fmt::format("{}: expected a UTC time like 2026-12-03T10:15:00Z, got '{}'", where, iso));
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(::timegm(&tm));
}

struct Acceptance {
  results::Acceptance section;
  std::string source;
  double finished_s = 0;
};

Acceptance load_acceptance(const std::string& file) {
  results::Document doc = results::load(file);
  if (!doc.acceptance) {
    throw UsageError(
        fmt::format("{}: no acceptance section (subcommand '{}'; export-prometheus "
                    "reads 'ibscope accept' results)",
                    file, doc.command.subcommand));
  }
  if (!doc.finished_utc) throw UsageError(fmt::format("{}: finished_utc: expected a string", file));
  return {std::move(*doc.acceptance), file, unix_time(*doc.finished_utc, file + ": finished_utc")};
}

int run_export(const ExportFlags& f) {
  if (!f.out.empty()) output::prometheus::check_textfile_path(f.out, "-o");
  // Every file is loaded and checked first: a bad one stops the command before any output.
  std::vector<Acceptance> runs;
  for (const auto& file : f.files) runs.push_back(load_acceptance(file));
  const Acceptance* newest = &runs.front();
  for (const auto& r : runs) {
    if (r.finished_s > newest->finished_s) newest = &r;
  }
  const std::string text = output::prometheus::exposition_text(
      output::prometheus::acceptance_metrics(newest->section, newest->finished_s));
  if (f.out.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  write_file_replacing(f.out, text);
  return 0;
}

}  // namespace

Command add_export_prometheus_command(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  auto* sub = app.add_subcommand(
      "export-prometheus",
      "Acceptance verdicts (per link, host, NIC, straggler) of the newest 'ibscope accept' "
      "results file as Prometheus metrics for node-exporter's textfile collector");
  sub->add_option("results", flags->files, "Results files of 'ibscope accept'")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", flags->out,
                  "Write the metrics to FILE (*.prom), replacing it atomically; default: stdout")
      ->type_name("FILE");
  sub->footer(kExportFooter);
  return {sub, [flags]() -> int { return run_export(*flags); }};
}

}  // namespace ibscope::cli
