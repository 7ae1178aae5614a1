#pragma once
/// Acceptance verdicts as Prometheus metrics, in the text exposition format 0.0.4 that
/// node-exporter's textfile collector reads (`*.prom` files in its --collector.textfile.directory),
/// so a cluster can alert on a degraded link or host (docs/acceptance.md, "Prometheus").
/// Pure formatting: no I/O. Rates are GB/s (1e9 B/s) as in the results file, latency in µs.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ibscope/results/acceptance.hpp"

namespace ibscope::output::prometheus {

/// One sample: its labels (name, unescaped value) in the order printed, and its value.
struct Sample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

/// A metric family: every sample of one metric name, printed after its HELP and TYPE lines.
struct Family {
  std::string name;  ///< matches [a-zA-Z_:][a-zA-Z0-9_:]*
  std::string help;
  std::string type = "gauge";
  std::vector<Sample> samples;
};

/// A label value escaped as the format requires: backslash, double quote and newline become
/// \\, \" and \n.
std::string escape_label_value(std::string_view value);

/// HELP text escaped as the format requires: backslash and newline.
std::string escape_help(std::string_view help);

/// The exposition text: per family `# HELP`, `# TYPE`, then one line per sample
/// (`name{label="value",...} value`). Families without samples and samples whose value is not
/// finite are left out (the textfile collector needs no NaN for "unknown"; absent is unknown).
/// Ends with a newline.
std::string exposition_text(const std::vector<Family>& families);

/// The metrics of an `acceptance` section (results/README.md), `timestamp_s` the Unix time of
/// the run's end. Families: ibscope_accept_{pass,timestamp_seconds,links,failed_links,
/// failed_hosts}; per link (labels rank_a, rank_b, host_a, host_b, nic_a, nic_b):
/// ibscope_link_{bandwidth_gbps,expected_gbps,fraction_of_expected,latency_us,pass}; per host
/// ibscope_host_{pass,culprit}; per NIC ibscope_nic_pass; per rank of the all-reduce sweep
/// ibscope_straggler (1 the straggler, 0 the others) and ibscope_accept_allreduce_wrong.
/// Figures that are unknown (NaN) are left out.
std::vector<Family> acceptance_metrics(const results::Acceptance& acceptance, double timestamp_s);

/// Checks, before anything runs, a textfile path given by `flag`: it must end in ".prom" (the
/// collector reads nothing else) and its folder must exist. Throws UsageError. The file itself
/// is written with write_file_replacing (core/atomic_file.hpp): unlike a results file,
/// a textfile is meant to be replaced by the next run.
void check_textfile_path(const std::string& path, std::string_view flag);

}  // namespace ibscope::output::prometheus
