// `ibscope fit RESULTS...`: alpha-beta fits of every measured curve and link, as a table, a
// versioned JSON document, a plot-ready series CSV and NCCL's tuner CSV. Reads results files
// only (model/results_fits.hpp does the fitting; docs/model.md, "Fits").

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/model/fit_export.hpp"
#include "ibscope/model/results_fits.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

struct FitFlags {
  std::vector<std::string> files;
  std::string json_out, series_out, nccl_out;
  std::string collective, algorithm;
};

constexpr const char* kFitFooter = R"(Examples:
  ibscope fit results/ibscope-allreduce-*.json
  ibscope fit results/*.json --json fits.json --series fits.csv
  ibscope fit run.json --collective allreduce --algorithm ring --nccl-tuner-csv nccl_perf.csv
  python3 nccl/plugins/tuner/example/scripts/optimize_config.py nccl_perf.csv

Each curve (collective, algorithm, transport, ranks, hosts, in place, type, op) is fitted
as t(n) = alpha + n/bw on the per-size median time, split where the protocol changes;
links come from p2p rows (latency, bw, bibw) and verbs probe rows. Output files are never
overwritten. Method: docs/model.md.)";

std::string size_text(double bytes) {
  return units::format_size(static_cast<std::uint64_t>(bytes));
}

std::string gbps_text(double gbps) { return gbps > 0 ? fmt::format("{:.4g}", gbps) : "-"; }

void print_segments(const std::string& id, const model::CurveFit& f) {
  for (std::size_t k = 0; k < f.segments.size(); ++k) {
    const auto& s = f.segments[k];
    std::string link_alpha = "-", link_bw = "-";
    if (s.link) {
      link_alpha = fmt::format("{:.3f}", s.link->alpha_s * 1e6);
      link_bw = gbps_text(s.link->bw_eff_gbps);
    }
    fmt::print("{:<56} {:>21} {:>3} {:>2}/{} {:>10.3f} {:>9} {:>7.4f} {:>8.1f} {:>11} {:>10}\n",
               k == 0 ? id : "",
               fmt::format("{}..{}", size_text(s.min_bytes), size_text(s.max_bytes)),
               s.last - s.first + 1, k + 1, f.segments.size(), s.alpha_s * 1e6,
               gbps_text(s.bw_gbps), s.r2, s.max_abs_residual_pct, link_alpha, link_bw);
  }
}

void print_table(const model::FitReport& report) {
  const auto header = [](const char* first) {
    fmt::print("{:<56} {:>21} {:>3} {:>4} {:>10} {:>9} {:>7} {:>8} {:>11} {:>10}\n", first, "sizes",
               "n", "seg", "alpha_us", "bw_GB/s", "r2", "worst_%", "link_a_us", "link_GB/s");
  };
  if (!report.curves.empty()) {
    header("# collective curve (median time per size)");
    for (const auto& c : report.curves) print_segments(c.key.id(), c.fit);
  }
  if (!report.links.empty()) {
    if (!report.curves.empty()) fmt::print("\n");
    header("# link (rank_a-rank_b)");
    for (const auto& l : report.links) {
      print_segments(fmt::format("{} {}", l.id(), l.transport), l.fit);
    }
  }
  fmt::print(
      "# alpha_us: intercept; bw_GB/s: 1/slope (1e9 B/s); r2 on time; worst_%: largest "
      "|measured - fitted| / measured; link_*: per link through the algorithm's cost "
      "formula (reduction folded into bandwidth for reducing collectives)\n");
}

void refuse_existing(const std::string& path, const char* flag) {
  if (!path.empty() && std::filesystem::exists(path)) {
    throw UsageError(
        fmt::format("{} {}: the file exists; ibscope never overwrites output, "
                    "choose another name",
                    flag, path));
  }
}

bool has_rows(const results::Document& doc) {
  return !doc.collectives.rows.empty() || !doc.p2p.rows.empty() ||
         (doc.probes && !doc.probes->rows.empty());
}

int run_fit(const FitFlags& f) {
  refuse_existing(f.json_out, "--json");
  refuse_existing(f.series_out, "--series");
  refuse_existing(f.nccl_out, "--nccl-tuner-csv");
  model::FitFilter filter;
  if (!f.collective.empty()) filter.collective = f.collective;
  if (!f.algorithm.empty()) filter.algorithm = f.algorithm;
  model::FitReport report;
  for (const auto& file : f.files) {
    const results::Document doc = results::load(file);
    if (!has_rows(doc)) {
      throw UsageError(
          fmt::format("{}: no collective, p2p or probe rows to fit (subcommand "
                      "'{}')",
                      file, doc.command.subcommand));
    }
    model::fit_results(doc, file, filter, report);
  }
  for (const auto& n : report.notes) fmt::print("note: {}\n", n);
  if (report.curves.empty() && report.links.empty()) {
    throw UsageError(fmt::format(
        "nothing to fit in {}: no curve or link with 3 sizes or more{}", fmt::join(f.files, ", "),
        filter.collective || filter.algorithm ? " matching the filter" : ""));
  }
  print_table(report);
  if (!f.json_out.empty()) {
    write_file_exclusive(f.json_out, model::fit_document_text(report));
    fmt::print("# fits written to {}\n", f.json_out);
  }
  if (!f.series_out.empty()) {
    write_file_exclusive(f.series_out, model::series_csv(report));
    fmt::print("# series written to {}\n", f.series_out);
  }
  if (!f.nccl_out.empty()) {
    const model::NcclCsv csv = model::nccl_tuner_csv(report);
    for (const auto& n : csv.notes) fmt::print("note: {}\n", n);
    write_file_exclusive(f.nccl_out, csv.text);
    fmt::print("# NCCL tuner CSV written to {}\n", f.nccl_out);
  }
  return 0;
}

}  // namespace

Command add_fit_command(CLI::App& app) {
  auto flags = std::make_shared<FitFlags>();
  auto* sub = app.add_subcommand(
      "fit", "Fit latency and bandwidth (t = alpha + n/bw, piecewise) to measured results");
  sub->add_option("results", flags->files,
                  "Results files (ibscope-*.json) or nccl-tests outputs to fit")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--json", flags->json_out,
                  "Write the fits as a versioned JSON document (kind ibscope-fit) to FILE")
      ->type_name("FILE");
  sub->add_option("--series", flags->series_out,
                  "Write plot-ready series (curve_id, size_bytes, measured_us, fitted_us, "
                  "residual_pct) as CSV to FILE")
      ->type_name("FILE.csv");
  sub->add_option("--nccl-tuner-csv", flags->nccl_out,
                  "Write the fitted curves in the CSV NCCL's example tuner scripts take "
                  "(optimize_config.py) to FILE")
      ->type_name("FILE");
  sub->add_option("--collective", flags->collective,
                  fmt::format("Fit only this collective's curves ({}); links are always fitted",
                              collectives::collective_names(", ")))
      ->type_name("X");
  sub->add_option("--algorithm", flags->algorithm,
                  "Fit only this algorithm's curves (ring, rd, rhd, tree, dbt)")
      ->type_name("A");
  sub->footer(kFitFooter);
  return {sub, [flags]() -> int { return run_fit(*flags); }};
}

}  // namespace ibscope::cli
