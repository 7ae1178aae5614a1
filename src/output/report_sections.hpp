#pragma once
// The sections of the HTML report (output/html_report.hpp), one builder per kind of data.
// Each returns its HTML, or a one-line note when the files have no data for it.

#include <string>
#include <vector>

#include "ibscope/output/html_report.hpp"
#include "ibscope/output/svg_chart.hpp"

namespace ibscope::output::report {

struct Section {
  std::string id;       // HTML id and data-section
  std::string heading;  // <h2>
  std::string html;     // the content; empty: `note` instead
  std::string note;     // why there is nothing to show
};

// report_context.cpp
Section context_section(const std::vector<ReportFile>& files);
// Expected line rates (GB/s) from the files (acceptance, topology, verbs ports, probes) and
// the given rate, as reference lines for bandwidth charts.
std::vector<ReferenceLine> line_rates(const std::vector<ReportFile>& files,
                                      const std::optional<double>& given_gbit);

// report_curves.cpp: busbw and latency vs size per collective; p2p latency and bandwidth.
Section collectives_section(const std::vector<ReportFile>& files,
                            const std::vector<ReferenceLine>& rates);
Section p2p_section(const std::vector<ReportFile>& files, const std::vector<ReferenceLine>& rates);

// report_acceptance.cpp: all-pairs matrices and stragglers, from the typed acceptance section
// (the loader refused a malformed one).
Section pairs_section(const std::vector<ReportFile>& files);
Section stragglers_section(const std::vector<ReportFile>& files);

// report_congestion.cpp: accept --congestion's impact factors (only when a file has them).
bool has_congestion(const std::vector<ReportFile>& files);
Section congestion_section(const std::vector<ReportFile>& files);

// report_patterns.cpp: accept --pattern's and run's rounds (only when a file has them).
bool has_patterns(const std::vector<ReportFile>& files);
Section patterns_section(const std::vector<ReportFile>& files);

// report_loopback.cpp: every NIC's loopback, from a loopback section (probe loopback, run) or
// accept's preflight (only when a file measured a NIC).
bool has_loopback(const std::vector<ReportFile>& files);
Section loopback_section(const std::vector<ReportFile>& files);

// report_at_scale.cpp: the all-pairs and straggler figures of jobs of more than
// kPerRankChartMaxRanks ranks, as distributions and the worst links and ranks by name (a
// matrix or a bar per rank would not fit a page). `ranks`: the ranks the links join.
inline constexpr std::size_t kPerRankChartMaxRanks = 64;
std::string p2p_at_scale(const ReportFile& f, std::size_t i, std::size_t ranks);
std::string stragglers_at_scale(const ReportFile& f, std::size_t i);

// report_why.cpp: per failing link what its NIC counters say, per host the rail balance
// (docs/counters.md).
Section why_section(const std::vector<ReportFile>& files);

// report_fits.cpp: measured vs fitted (model/results_fits.hpp).
Section fits_section(const std::vector<ReportFile>& files);

// report_training.cpp
Section training_section(const std::optional<TrainingReport>& training);

// report_compare.cpp: `ibscope compare --report`: verdicts, then every row that changed.
Section comparison_section(const std::vector<ReportFile>& files,
                           const model::RunComparison& comparison);

// report_watch.cpp: per watch log and host, NIC rates and counter growth over time, findings.
Section watch_section(const std::vector<WatchLogFile>& logs);

// Helpers shared by the builders (html_report.cpp).
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);    // cells escaped
std::string paragraph(const std::string& text);                          // escaped
std::string figure(const std::string& svg, const std::string& caption);  // caption escaped
// The series name prefix for file `i` when several files are compared ("before: "), else "".
std::string file_prefix(const std::vector<ReportFile>& files, std::size_t i);

}  // namespace ibscope::output::report
