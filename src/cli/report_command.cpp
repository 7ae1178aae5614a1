// `ibscope report RESULTS... -o report.html`: one self-contained HTML page of the results
// (output/html_report.hpp), with the training-step section when a workload is given (tiers
// from the results files, as `ibscope model --fit` infers them). Reads files only.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/cli/training_report.hpp"
#include "ibscope/cli/workload_flags.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

struct ReportFlags {
  std::vector<std::string> files;
  std::vector<std::string> labels;
  std::string output;
  std::string title = "ibscope report";
  double expect_gbit = -1;  ///< < 0: not given
  WorkloadFlags workload;
  ClusterFlags cluster;
};

constexpr const char* kReportFooter = R"(Examples:
  ibscope report results/ibscope-allreduce-*.json -o allreduce.html
  ibscope report before.json after.json --label before,after --expect-gbps 400
  ibscope report accept.json intra.json --preset llama3-70b --inter-links 8
  ibscope report allreduce.json watch-node017.jsonl   # with an 'ibscope watch --log' file

One HTML file, inline SVG and CSS, no script, nothing fetched: it opens from a laptop after
being copied off the cluster. Several files share the axes (comparison). The training-step
section needs a workload; its tiers come from the files (multi-host runs: inter-node, one
host: intra-node) and the cluster flags. A *.jsonl file is an 'ibscope watch --log': per-NIC
rate and counter charts over time. Never overwrites. Charts: docs/report.md.
Exit status: 0, 2 usage (bad flag, unreadable or malformed results file; no page written).)";

std::string default_output(const std::string& first) {
  std::filesystem::path p(first);
  p.replace_extension(".html");
  return p.string();
}

int run_report(const ReportFlags& f) {
  const std::string output = f.output.empty() ? default_output(f.files.front()) : f.output;
  if (std::filesystem::exists(output)) {
    throw UsageError(
        fmt::format("-o {}: the file exists; ibscope never overwrites output, "
                    "choose another name",
                    output));
  }
  if (!f.labels.empty() && f.labels.size() != f.files.size()) {
    throw UsageError(fmt::format("--label: {} label(s) for {} results file(s); give one per file",
                                 f.labels.size(), f.files.size()));
  }
  std::vector<output::ReportFile> files;
  output::ReportOptions o;
  for (std::size_t i = 0; i < f.files.size(); ++i) {
    const std::string label =
        f.labels.empty() ? std::filesystem::path(f.files[i]).stem().string() : f.labels[i];
    // `ibscope watch --log` files: their own section (docs/counters.md, "ibscope watch").
    if (std::filesystem::path(f.files[i]).extension() == ".jsonl") {
      o.watch_logs.push_back({f.files[i], label, results::load_watch_log(f.files[i])});
      continue;
    }
    files.push_back({f.files[i], label, results::load(f.files[i])});
  }
  o.title = f.title;
  if (f.expect_gbit > 0) o.line_rate_gbit = f.expect_gbit;
  if (workload_given(f.workload)) {
    ClusterFlags cf = f.cluster;
    cf.fit_files.insert(cf.fit_files.begin(), f.files.begin(), f.files.end());
    o.training =
        training_report(chosen_workload(f.workload), cf, model::parse_what_ifs(f.workload.what_if),
                        training_options(f.workload));
    if (!o.training->missing.empty()) fmt::print("note: training step: {}\n", o.training->missing);
  }
  o.command_line = fmt::format("ibscope report {}", fmt::join(f.files, " "));
  const std::string page = output::html_report(files, o);
  write_file_exclusive(output, page);
  fmt::print("# report: {}\n", output);
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto f = std::make_shared<ReportFlags>();
  auto* sub = app.add_subcommand(
      "report",
      "One self-contained HTML report of results files: context, busbw and latency "
      "vs size, all-pairs matrix, stragglers, fits, training step; several files "
      "compared on the same axes");
  sub->add_option("results", f->files,
                  "Results files (ibscope-*.json), nccl-tests outputs, and 'ibscope watch --log' "
                  "files (*.jsonl)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", f->output,
                  "The HTML file to write (default: beside the first results file, "
                  "<stem>.html); never overwritten")
      ->type_name("FILE");
  sub->add_option("--title", f->title, "Page title")->capture_default_str();
  sub->add_option("--label", f->labels,
                  "One label per results file for legends (comma-separated; default: file names)")
      ->delimiter(',');
  sub->add_option("--expect-gbps", f->expect_gbit,
                  "Line rate in Gb/s (1e9 bit/s) to draw on bandwidth charts, as 'ibscope "
                  "accept --expect-gbps' (default: from the files' ports or acceptance)")
      ->check(CLI::PositiveNumber);
  add_workload_flags(*sub, f->workload);
  add_cluster_flags(*sub, f->cluster);
  sub->footer(kReportFooter);
  return {sub, [f] { return run_report(*f); }};
}

}  // namespace ibscope::cli
