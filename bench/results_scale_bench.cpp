// Results at scale (issue 23): for synthetic jobs of 1,024, 4,096 and 10,752 ranks (8 per host;
// tests/common/synthetic_results.hpp), the results file's size per section and the time to
// serialise it (to_text), to write it (serialise, write, fsync, link: results::write), to load
// it (read, parse, schema check, typed read: what `ibscope validate` and every reader do) and to
// render `ibscope report`'s page from it. Median of `repeats` runs.
//
//   ibscope_bench_results_scale [repeats (default 3)] [ranks ... (default 1024 4096 10752)]
//       [--keep-samples] [--out DIR (keep the last file of each size there)]

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/synthetic_results.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/writer.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
namespace results = ibscope::results;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double mb(std::uintmax_t bytes) { return static_cast<double>(bytes) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  bool keep = false;
  fs::path out_dir;
  std::vector<int> ranks;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--keep-samples") {
      keep = true;
    } else if (a == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (i == 1) {
      repeats = std::max(1, std::atoi(argv[i]));
    } else {
      ranks.push_back(std::atoi(argv[i]));
    }
  }
  if (ranks.empty()) ranks = {1024, 4096, 10752};
  const fs::path dir = fs::temp_directory_path() / fmt::format("ibscope-scale-bench-{}", getpid());
  fs::create_directories(dir);

  fmt::print(
      "results at scale: synthetic accept+sweep+soak documents, 8 ranks per host, "
      "{} per-rank samples, median of {}\n",
      keep ? "every (--keep-samples)" : "summarised", repeats);
  fmt::print("{:>6} {:>6} {:>10} {:>13} {:>9} {:>9} {:>10} {:>11}\n", "ranks", "hosts", "file (MB)",
             "serialise (s)", "write (s)", "load (s)", "report (s)", "report (MB)");
  for (const int n : ranks) {
    ibscope::testing::SyntheticJob job;
    job.hosts = std::max(1, n / job.ranks_per_host);
    job.keep_rank_samples = keep;
    std::vector<double> text_s, write_s, load_s, report_s;
    std::uintmax_t file_bytes = 0;
    std::size_t page_bytes = 0;
    nlohmann::json sections;
    for (int r = 0; r < repeats; ++r) {
      results::Document doc = ibscope::testing::synthetic_results(job);
      auto t0 = Clock::now();
      const std::size_t text_bytes = results::to_text(doc).size();
      text_s.push_back(seconds_since(t0));
      (void)text_bytes;
      t0 = Clock::now();
      const fs::path path = results::write(doc, dir);
      write_s.push_back(seconds_since(t0));
      file_bytes = fs::file_size(path);

      t0 = Clock::now();
      results::Document back = results::load(path);
      load_s.push_back(seconds_since(t0));

      t0 = Clock::now();
      const std::string page = ibscope::output::html_report(
          {ibscope::output::ReportFile{path.string(), "scale", std::move(back)}}, {});
      report_s.push_back(seconds_since(t0));
      page_bytes = page.size();
      if (r == 0) sections = nlohmann::json::parse(results::to_text(doc));
      if (r + 1 == repeats && !out_dir.empty()) {
        fs::create_directories(out_dir);
        fs::copy_file(path, out_dir / fmt::format("scale-{}-ranks.json", job.ranks()),
                      fs::copy_options::overwrite_existing);
      }
      fs::remove(path);
    }
    fmt::print("{:>6} {:>6} {:>10.2f} {:>13.2f} {:>9.2f} {:>9.2f} {:>10.2f} {:>11.2f}\n",
               job.ranks(), job.hosts, mb(file_bytes), median(text_s), median(write_s),
               median(load_s), median(report_s), mb(page_bytes));
    std::string parts;
    for (const auto& [key, value] : sections.items()) {
      const std::size_t bytes = value.dump(1).size();
      if (bytes > 10'000) parts += fmt::format(" {}={:.2f}", key, mb(bytes));
    }
    fmt::print("       sections (MB):{}\n", parts);
    if (sections.contains("acceptance")) {
      std::string acc;
      for (const auto& [key, value] : sections["acceptance"].items()) {
        const std::size_t bytes = value.dump(1).size();
        if (bytes > 10'000) acc += fmt::format(" {}={:.2f}", key, mb(bytes));
      }
      fmt::print("       acceptance (MB):{}\n", acc);
    }
  }
  fs::remove_all(dir);
  return 0;
}
