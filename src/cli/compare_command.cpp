// `ibscope compare A B`: did it get worse? Two runs (or a run against a baseline), ibscope
// results files or nccl-tests outputs, compared row by row with a noise band from the rows' own
// samples (model/run_compare.hpp has the rule); regressions and improvements named, exit 1 on
// a regression beyond --threshold. Reads files only.

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/model/run_compare.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

struct CompareFlags {
  std::string a, b;
  model::CompareOptions options;
  bool all_rows = false;
  std::string report;  ///< --report: the HTML page, "" for none
};

constexpr const char* kCompareFooter = R"(Examples:
  ibscope compare results/before.json results/after.json
  ibscope compare baseline.json today.json --threshold 5
  ibscope compare all_reduce_perf-old.txt all_reduce_perf-new.txt     # nccl-tests outputs
  ibscope compare ucx-allreduce.json all_reduce_perf.txt --any-algorithm  # UCX against NCCL
  ibscope compare before.json after.json --report compare.html  # + the curves overlaid

Rows match by what they measured and their size: a collective row by collective, algorithm,
type, op, ranks, in place or not, memory (and root); a p2p row by test, rank pair, window and
memory; a verbs probe row by test, rank pair, devices and QPs. change = (B - A) / A of the
median time per call (nccl-tests: its time; probe bandwidth rows: size / bw). The noise band
is max(--noise-floor, 3 x the robust spread of both rows' samples, 1.4826 MAD / median,
combined in quadrature): a change inside it is noise, not a regression. Method:
docs/model.md, "Comparing runs".
Exit status: 0 no regression beyond --threshold, 1 a regression beyond it, 2 usage (a
malformed file, no row in common).)";

std::string verdict_of(const model::RowComparison& r) {
  switch (r.change) {
    case model::RowChange::kNoise:
      return "noise";
    case model::RowChange::kFaster:
      return "faster";
    case model::RowChange::kSlower:
      return r.beyond_threshold ? "SLOWER" : "slower";
  }
  return "?";
}

std::string bw_text(const model::RowComparison& r) {
  return r.a_bw_gbps > 0 && r.b_bw_gbps > 0 ? fmt::format("{:+.1f}", r.bw_change_pct) : "-";
}

std::string row_id(const model::RowComparison& r) {
  if (r.section != "collective") {  // a link: its hosts, on both sides when they differ
    return r.a_label == r.b_label ? fmt::format("{} ({})", r.key, r.a_label)
                                  : fmt::format("{} ({} vs {})", r.key, r.a_label, r.b_label);
  }
  if (r.a_label == r.b_label) return r.key;
  return fmt::format("{} ({} vs {})", r.key, r.a_label, r.b_label);
}

void print_row(const model::RowComparison& r) {
  fmt::print("{:<52} {:>9} {:>12.2f} {:>12.2f} {:>+9.1f} {:>8} {:>7.1f}  {}\n", row_id(r),
             units::format_size(r.size_bytes), r.a_us, r.b_us, r.change_pct, bw_text(r), r.band_pct,
             verdict_of(r));
}

void print_list(const char* title, const model::RunComparison& c, model::RowChange change) {
  const int n = c.count(change);
  fmt::print("# {} ({}){}\n", title, n, n == 0 ? "" : ":");
  for (const auto& r : c.rows) {
    if (r.change != change) continue;
    fmt::print("#   {} {}: {:+.1f} % time ({:.2f} -> {:.2f} us), band {:.1f} %{}\n", row_id(r),
               units::format_size(r.size_bytes), r.change_pct, r.a_us, r.b_us, r.band_pct,
               r.beyond_threshold ? ", beyond the threshold" : "");
  }
}

// The HTML page: the comparison section, then the report's sections with A and B on shared
// axes (output/html_report.hpp).
void write_report(const CompareFlags& f, results::Document a, results::Document b,
                  const model::RunComparison& c) {
  std::vector<output::ReportFile> files;
  files.push_back({f.a, "A " + std::filesystem::path(f.a).stem().string(), std::move(a)});
  files.push_back({f.b, "B " + std::filesystem::path(f.b).stem().string(), std::move(b)});
  output::ReportOptions o;
  o.title = "ibscope compare";
  o.comparison = c;
  o.command_line = fmt::format("ibscope compare {} {}", f.a, f.b);
  write_file_exclusive(f.report, output::html_report(files, o));
  fmt::print("# report: {}\n", f.report);
}

int run_compare(const CompareFlags& f) {
  if (!f.report.empty() && std::filesystem::exists(f.report)) {
    throw UsageError(fmt::format(
        "--report {}: the file exists; ibscope never overwrites output, choose another name",
        f.report));
  }
  results::Document a = results::load(f.a);
  results::Document b = results::load(f.b);
  const model::RunComparison c = model::compare_runs(a, b, f.options);
  fmt::print("# ibscope compare: A = {} ({} {}, {} ranks)\n", f.a, a.tool.name,
             a.command.subcommand, a.job.ranks);
  fmt::print("#                  B = {} ({} {}, {} ranks)\n", f.b, b.tool.name,
             b.command.subcommand, b.job.ranks);
  fmt::print(
      "# change: B against A in median time per call (+ slower); band: max({:g} %, {:g} x "
      "robust spread of both rows' samples); threshold {:g} %\n",
      f.options.noise_floor_pct, f.options.noise_k, f.options.threshold_pct);
  for (const auto& n : c.notes) fmt::print("note: {}\n", n);
  if (c.rows.empty()) {
    throw UsageError(fmt::format(
        "{} and {}: no row in common ({} row(s) only in A, {} only in B){}", f.a, f.b, c.only_a,
        c.only_b,
        f.options.any_algorithm ? ""
                                : "; --any-algorithm matches rows of different algorithms "
                                  "and memory (NCCL against UCX)"));
  }
  fmt::print("{:<52} {:>9} {:>12} {:>12} {:>9} {:>8} {:>7}  {}\n", "# row", "size", "A_us", "B_us",
             "time_%", "busbw_%", "band_%", "verdict");
  for (const auto& r : c.rows) {
    if (f.all_rows || r.change != model::RowChange::kNoise || c.rows.size() <= 64) print_row(r);
  }
  if (c.only_a > 0 || c.only_b > 0) {
    fmt::print("# unmatched: {} row(s) only in A, {} only in B\n", c.only_a, c.only_b);
  }
  print_list("regressions", c, model::RowChange::kSlower);
  print_list("improvements", c, model::RowChange::kFaster);
  const int failures = c.failures();
  if (!f.report.empty()) write_report(f, std::move(a), std::move(b), c);
  fmt::print("# compare: {} row(s), {} within noise, {} slower, {} faster: {}\n", c.rows.size(),
             c.count(model::RowChange::kNoise), c.count(model::RowChange::kSlower),
             c.count(model::RowChange::kFaster),
             failures > 0 ? fmt::format("REGRESSION ({} row(s) slower by more than {:g} %)",
                                        failures, f.options.threshold_pct)
                          : "no regression beyond the threshold");
  return failures > 0 ? 1 : 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto f = std::make_shared<CompareFlags>();
  auto* sub = app.add_subcommand(
      "compare",
      "Compare two runs row by row (results files or nccl-tests outputs): changes with a noise "
      "band, regressions and improvements named, exit 1 on a regression beyond a threshold");
  sub->add_option("A", f->a, "The baseline: a results file or nccl-tests output")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("B", f->b, "The run compared with it")->required()->check(CLI::ExistingFile);
  sub->add_option("--threshold", f->options.threshold_pct,
                  "Fail (exit 1) when a row is slower than A by more than PCT percent (and "
                  "outside its noise band)")
      ->type_name("PCT")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--noise-floor", f->options.noise_floor_pct,
                  "The noise band is never narrower than PCT percent")
      ->type_name("PCT")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_flag("--any-algorithm", f->options.any_algorithm,
                "Match collective rows whatever their algorithm and memory (e.g. nccl-tests' "
                "NCCL rows against ibscope's UCX ring)");
  sub->add_flag("--all-rows", f->all_rows,
                "Print every matched row (by default rows within noise are left out past 64)");
  sub->add_option("--report", f->report,
                  "Also write an HTML page: the rows that changed, then the two runs' curves "
                  "overlaid (as 'ibscope report A B'); never overwritten")
      ->type_name("FILE.html");
  sub->footer(kCompareFooter);
  return {sub, [f]() -> int { return run_compare(*f); }};
}

}  // namespace ibscope::cli
