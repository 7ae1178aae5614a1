// `ibscope fit` on files the real binary just measured: a 2-rank all-reduce sweep follows its
// measured curve (median |residual| under 30 %, the top segment's bandwidth within 2x of the
// measured algbw at 1 MiB) and a p2p run gives a positive link bandwidth; the JSON, series and NCCL
// tuner CSV are written and never overwritten; a corrupt file is a usage error naming the file.

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../common/text_lines.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// Whether a per-size median exceeds 1 ms: a 2-rank shared-memory all-reduce of at most 1 MiB
// takes ~0.1 ms, so such a median means the ranks were descheduled for most of that size's
// iterations (seen on the 2-core CI VM under load: 8 ms medians at 8..32 KiB). That curve
// measures the scheduler, not the transport; the test measures again instead of fitting it.
bool stalled(const ProcessResult& r) {
  const nlohmann::json doc = load_run_results(r);  // kept: rows refer into it
  for (const auto& row : doc.at("collectives").at("rows")) {
    if (row.at("iteration_us").at("p50").get<double>() > 1000) return true;
  }
  return false;
}

double median_abs_residual_pct(const nlohmann::json& series) {
  std::vector<double> r;
  for (const auto& point : series) r.push_back(std::abs(point.at("residual_pct").get<double>()));
  std::sort(r.begin(), r.end());
  return r.empty() ? 0.0 : r[r.size() / 2];
}

// The largest median |residual| over the all-reduce curves `ibscope fit` makes of `results`
// (written to a scratch file in `dir`).
double worst_allreduce_residual_pct(const std::string& results, const std::string& dir,
                                    int attempt) {
  const std::string out = fmt::format("{}/probe-fit-{}.json", dir, attempt);
  const auto fit = run_process({{"fit", results, "--json", out}, {}, 60});
  INFO(describe(fit));
  REQUIRE(fit.exit_code == 0);
  double worst = 0;
  const nlohmann::json doc = nlohmann::json::parse(read_text_file(out));  // the loop refers into it
  for (const auto& c : doc.at("curves")) {
    if (c.at("collective") != "allreduce") continue;
    worst = std::max(worst, median_abs_residual_pct(c.at("fit").at("series")));
  }
  return worst;
}

}  // namespace

TEST_CASE("fit measured all-reduce and p2p files", "[mp][model]") {
  const std::string dir = make_temp_dir();
  ProcessResult ar;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ar = run_process({{"allreduce", "--np", "2", "-b", "8", "-e", "1M", "-n", "20", "--timeout",
                       "30", "--out", dir},
                      {},
                      180});
    INFO(describe(ar));
    REQUIRE(ar.exit_code == 0);
    if (stalled(ar)) {
      WARN("attempt " << attempt << ": a per-size median above 1 ms (descheduled ranks)");
      continue;
    }
    // One curve of 20 iterations per size was seen 36 % off its fit in a CI run (and 1-18 % in
    // six idle runs): measured again, as for a stall; three such curves in a row still fail.
    const double worst = worst_allreduce_residual_pct(results_path(ar), dir, attempt);
    if (worst < 30) break;
    WARN("attempt " << attempt << ": a curve " << worst << " % off its fit (noise)");
  }
  const auto p2p = run_process(
      {{"p2p", "--np", "2", "-b", "8", "-e", "1M", "--timeout", "30", "--out", dir}, {}, 180});
  INFO(describe(p2p));
  REQUIRE(p2p.exit_code == 0);

  const std::string json_out = dir + "/fits.json";
  const std::string series_out = dir + "/series.csv";
  const std::string nccl_out = dir + "/nccl.csv";
  const auto fit = run_process({{"fit", results_path(ar), results_path(p2p), "--json", json_out,
                                 "--series", series_out, "--nccl-tuner-csv", nccl_out},
                                {},
                                60});
  INFO(describe(fit));
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.out.find("alpha_us") != std::string::npos);

  const auto doc = nlohmann::json::parse(read_text_file(json_out));
  CHECK(doc.at("kind") == "ibscope-fit");
  CHECK(doc.at("schema_version") == 1);
  CHECK(doc.at("sources").size() == 2);
  int allreduce_curves = 0;
  for (const auto& c : doc.at("curves")) {
    if (c.at("collective") != "allreduce") continue;
    ++allreduce_curves;
    INFO(c.at("id").get<std::string>());
    CHECK(c.at("ranks") == 2);
    const auto& series = c.at("fit").at("series");
    CHECK(series.size() == 18);  // 8 B .. 1 MiB, factor 2
    // Not r2 on absolute times: that is decided by the two or three largest sizes, and on
    // this shared 2-core machine single sizes of a real sweep sit 5x off their neighbours.
    // Precision against a known truth is the unit tests' job ([model] curve fit); here the fit
    // must follow the measured curve over five decades and get the bandwidth's scale right.
    CHECK(median_abs_residual_pct(series) < 30);
    const double top_bw_gbps = c.at("fit").at("segments").back().at("bw_gbps").get<double>();
    const double measured_gbps = 1048576 / (series.back().at("measured_us").get<double>() * 1e3);
    CHECK(top_bw_gbps > measured_gbps / 2);
    CHECK(top_bw_gbps < measured_gbps * 2);
  }
  CHECK(allreduce_curves == 2);  // out of place and in place
  bool bw_link = false;
  for (const auto& l : doc.at("links")) {
    if (l.at("test") != "bw") continue;
    bw_link = true;
    CHECK(l.at("bw_gbps").get<double>() > 0);
  }
  CHECK(bw_link);

  const std::string series = read_text_file(series_out);
  CHECK(series.rfind("curve_id,source,size_bytes,measured_us,fitted_us,residual_pct\n", 0) == 0);
  const std::string nccl = read_text_file(nccl_out);
  CHECK(nccl.rfind("collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,"
                   "regBuff,cost_metric,bandwidth_gbps,latency_us\n",
                   0) == 0);
  CHECK(nccl.find("\nallreduce,1048576,ring,simple,-1,1,2,-1,-1,") != std::string::npos);

  // Never overwrite: the same --json again is refused before anything is fitted.
  const auto again = run_process({{"fit", results_path(ar), "--json", json_out}, {}, 60});
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("exists") != std::string::npos);
}

TEST_CASE("fit rejects a corrupt file and a file with nothing to fit", "[mp][model]") {
  const std::string dir = make_temp_dir();
  const std::string bad = dir + "/corrupt.json";
  std::ofstream(bad) << "{\"schema_version\": 1, \"collectives\": ";
  const auto b = run_process({{"fit", bad}, {}, 30});
  INFO(describe(b));
  CHECK(b.exit_code == 2);
  CHECK(b.err.find("corrupt.json") != std::string::npos);

  const auto t = run_process({{"topo", "--np", "1", "--out", dir}, {}, 60});
  INFO(describe(t));
  REQUIRE(t.exit_code == 0);
  const auto empty = run_process({{"fit", results_path(t)}, {}, 30});
  INFO(describe(empty));
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("no collective, p2p or probe rows") != std::string::npos);
}
