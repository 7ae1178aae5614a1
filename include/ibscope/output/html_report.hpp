#pragma once
/// `ibscope report`: one self-contained HTML page (inline CSS and SVG, no script, nothing
/// fetched) built from loaded results files. Sections: context (hosts, NICs, line rates,
/// versions, warnings), busbw and latency vs message size per collective and algorithm with
/// the expected line rate as a reference, p2p latency and bandwidth, the all-pairs bandwidth
/// matrix with failing pairs marked, per-rank stragglers, measured vs fitted curves
/// (model/results_fits.hpp) and the training-step breakdown with its what-if table. Several
/// files share the axes, one label each (comparison). A section without data is one line
/// saying so. Every figure comes from a file or from a model computed from the files.
/// Charts and their attributes: output/svg_chart.hpp; the page: docs/report.md.

#include <optional>
#include <string>
#include <vector>

#include "ibscope/model/run_compare.hpp"
#include "ibscope/model/scaling.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/results/document.hpp"
#include "ibscope/results/watch_log.hpp"

namespace ibscope::output {

/// One results file of the report.
struct ReportFile {
  std::string path;       ///< as given on the command line
  std::string label;      ///< its name in legends (the file's stem, or --label)
  results::Document doc;  ///< loaded and validated (results/loader.hpp)
};

/// The training-step section, computed by the caller (cli/report_command.cpp) from a workload
/// and the tiers the files give; rendered as a stacked bar and a what-if table.
struct TrainingReport {
  std::string workload;            ///< name and source
  std::string layout;              ///< tp x pp x dp, GPUs, nodes
  std::vector<std::string> tiers;  ///< one line per tier: figures and where they came from
  std::optional<model::StepBreakdown> breakdown;  ///< absent when it could not be computed
  std::vector<model::WhatIfResult> what_ifs;
  std::string calibration;  ///< what --calibrate solved, or empty
  /// --scale: one row per node count (drawn as efficiency and network share vs nodes).
  std::vector<model::ScaleRow> scaling;
  bool scale_fixed_batch = true;  ///< the global batch is the workload's at every scale
  std::string missing;            ///< why there is no breakdown (e.g. a tier without data)
};

/// One `ibscope watch --log` file of the report (its own section, charts over time).
struct WatchLogFile {
  std::string path;
  std::string label;
  std::vector<results::WatchLogLine> lines;  ///< results::load_watch_log
};

struct ReportOptions {
  std::string title = "ibscope report";
  std::optional<double> line_rate_gbit;  ///< given line rate (Gb/s): a reference line
  std::optional<TrainingReport> training;
  /// `ibscope compare --report`: the two files' comparison, a section of its own (first) with
  /// the rows that changed; the curves section then overlays the two runs.
  std::optional<model::RunComparison> comparison;
  std::string command_line;  ///< how the report was made, shown at the bottom
  /// Watch logs: a "NIC counters (ibscope watch)" section, only when there are some.
  std::vector<WatchLogFile> watch_logs;
};

/// The page. The files are typed documents the results loader has checked (schema, then the
/// typed readers of every section, acceptance included); a malformed field is refused there,
/// naming the file and the JSON path, before the page is built.
std::string html_report(const std::vector<ReportFile>& files, const ReportOptions& options);

}  // namespace ibscope::output
