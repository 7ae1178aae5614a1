// `ibscope predict` as a user meets it: tiers given on the command line give the documented
// formula's figure; tiers fitted from a real local run predict that run; bad input exits 2.

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>

#include "../common/sanitized.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {
/// The largest ratio between the times of one size's rows (the run has one algorithm and one type,
/// so they are its in-place and out-of-place twins).
double worst_twin_ratio(const nlohmann::json& doc) {
  std::map<std::int64_t, std::vector<double>> by_size;
  for (const auto& row : doc.at("collectives").at("rows")) {
    by_size[row.at("size_bytes").get<std::int64_t>()].push_back(row.at("time_us").get<double>());
  }
  double worst = 1;
  for (const auto& [size, times] : by_size) {
    const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
    if (*lo > 0) worst = std::max(worst, *hi / *lo);
  }
  return worst;
}
}  // namespace

TEST_CASE("predict with given tiers prints the ring formula's time", "[mp][model]") {
  const std::string dir = make_temp_dir();
  const auto r = run_cli({"predict", "--nodes", "4", "--inter-lat-us", "10", "--inter-bw-gbps",
                          "50", "--sizes", "1G", "--json", dir + "/p.json"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  // Ring all-reduce, p = 4: 2*3*10 us + 2*3/4 * 2^30 B / 50e9 B/s = 60 us + 32212.25 us.
  std::ifstream in(dir + "/p.json");
  const auto doc = nlohmann::json::parse(in);
  CHECK(doc.at("rows").at(0).at("predicted_us").get<double>() == Approx(60 + 32212.254720));
  CHECK(doc.at("rows").at(0).at("busbw_gbps").get<double>() ==
        Approx(2.0 * 3 / 4 * (1 << 30) / (32272.254720e-6) / 1e9));
  // The JSON is never overwritten.
  const auto again =
      run_cli({"predict", "--nodes", "4", "--inter-bw-gbps", "50", "--json", dir + "/p.json"});
  CHECK(again.exit_code != 0);
}

TEST_CASE("predict fitted from a local run reproduces that run", "[mp][model]") {
  // One host, two ranks: the intra-node tier, fitted to the run's own rows, predicts those rows
  // within kTolerancePct at every size (predict --tolerance: exit 1 when any |error| exceeds
  // it), whenever the run is sound: the fit's r2 >= kSoundR2 and every row's in-place and
  // out-of-place times within kTwinRatio of each other (the same sum of the same size: a gap is
  // a co-scheduled process, not the network). The error is the alpha-beta formula's misfit at 3
  // sizes over a factor 16. The sizes are all past the caches: on this project's 2-core VM on
  // 2026-12-07 (idle), 4-64 MiB gave r2 < 0.9 in 11 of 12 runs (64 MiB up to 4.6 x the fit's
  // time, 4 MiB in cache), 256 KiB-4 MiB and 1-16 MiB r2 -0.14 to 0.87; 16-256 MiB gave r2
  // 0.94-0.997 and a worst |error| of 2.2-17 % in 6 of 7 runs (one r2 0.14, 60 %). On
  // 2026-12-05, 4-64 MiB runs with r2 0.92-0.998 had 5.0-18.1 %; the ASan suite of 2026-12-07
  // had r2 0.948 with 16 MiB at 12.2 ms out of place and 19.7 ms in place, a -32 % error, hence
  // the twin rule. So 25 % passes every sound run with margin and still fails a factor-of-2
  // slip between the fitted and the predicted formula (a busbw factor, a doubled hop count),
  // which leaves r2 alone. A run that is not sound is measured again, 4 runs at most (one in
  // the sanitizer build, whose times are not representative); if none is, the tolerance is not
  // checked (WARN).
  constexpr double kTolerancePct = 25;
  constexpr double kSoundR2 = 0.9;
  constexpr double kTwinRatio = 1.3;
  constexpr int kRuns = kSanitizedBuild ? 1 : 4;
  bool checked = false;
  for (int attempt = 1; attempt <= kRuns && !checked; ++attempt) {
    const std::string dir = make_temp_dir();
    const auto run = run_process({{"allreduce", "--np", "2", "-A", "ring", "-b", "16M", "-e",
                                   "256M", "-f", "4", "-n", "5", "--out", dir},
                                  {},
                                  120,
                                  ""});
    INFO(describe(run));
    REQUIRE(run.exit_code == 0);
    const std::string file = results_path(run);
    const auto p =
        run_cli({"predict", "--fit", file, "--gpus-per-node", "2", "--sizes", "16M,64M,256M",
                 "--compare", file, "--tolerance", fmt::format("{:g}", kTolerancePct)});
    INFO(describe(p));
    // The plumbing, in every run: fit -> tier -> formula -> comparison.
    REQUIRE(p.out.find("intra-node tier: latency") != std::string::npos);
    CHECK(p.out.find("fitted: ring all-reduce") != std::string::npos);
    CHECK(p.out.find("compared with measurements: 3 of 3 rows") != std::string::npos);
    std::smatch m;
    REQUIRE(std::regex_search(p.out, m, std::regex(R"(, r2 (-?[0-9.]+),)")));
    const double r2 = std::stod(m[1].str());
    const double twins = worst_twin_ratio(load_run_results(run));
    if (r2 < kSoundR2 || twins > kTwinRatio) {
      WARN("run " << attempt << " of " << kRuns << " not sound (fit r2 " << r2 << ", min "
                  << kSoundR2 << "; in-place/out-of-place time ratio " << twins << ", max "
                  << kTwinRatio << "): measured again\n"
                  << p.out);
      CHECK(p.exit_code <= 1);
      continue;
    }
    CHECK(p.exit_code == 0);
    CHECK(p.out.find(fmt::format("0 outside +-{:g} %", kTolerancePct)) != std::string::npos);
    checked = true;
  }
  if (!checked) {
    WARN("no sound run in " << kRuns << " (this machine is too loaded): the +-" << kTolerancePct
                            << " % tolerance was not checked");
  }
}

TEST_CASE("predict: bad input exits 2 with a clear message", "[mp][model]") {
  const std::string dir = make_temp_dir();
  const std::string corrupt = dir + "/corrupt.json";
  std::ofstream(corrupt) << "{\"schema_version\": 1, \"tool\": ";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"predict", "--inter-bw-gbps", "10"}, "--nodes and/or --gpus-per-node"},
      {{"predict", "--nodes", "4"}, "inter-node tier has no bandwidth"},
      {{"predict", "--nodes", "4", "--inter-bw-gbps", "10", "-A", "magic"},
       "unknown algorithm 'magic'"},
      {{"predict", "--nodes", "4", "--inter-bw-gbps", "10", "-c", "scan"},
       "unknown collective 'scan'"},
      {{"predict", "--nodes", "4", "--inter-bw-gbps", "10", "--sizes", "12Q"}, "--sizes"},
      {{"predict", "--nodes", "4", "--fit", corrupt}, corrupt},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}

TEST_CASE("predict from nccl-tests output: --nccl-algorithm says which formula its rows follow",
          "[mp][model][nccl-tests]") {
  const std::string fixtures = IBSCOPE_NCCL_TESTS_FIXTURES;
  // 2 ranks on 2 GH200 nodes (one rank per host), 1 MiB .. 128 MiB.
  const std::string two = fixtures + "/all_reduce_perf-gh200-2ranks.txt";
  // 8 ranks on 2 GH200 nodes, 8 B .. 128 MiB (the tree formula needs more than 2 ranks).
  const std::string eight = fixtures + "/all_reduce_perf-gh200-8ranks.txt";
  const std::vector<std::string> layout = {"--nodes", "8", "--sizes", "64M"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "predict");
    args.insert(args.end(), layout.begin(), layout.end());
    return run_cli(args);
  };
  SECTION("ring: the inter-node tier fitted from NCCL's rows, the prediction at 2 ranks matches") {
    const auto r = run_cli({"predict", "--fit", two, "--nccl-algorithm", "Ring", "--compare", two,
                            "--nodes", "2", "--sizes", "1M,16M,128M", "--tolerance", "15"});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("inter-node tier:") != std::string::npos);
    CHECK(r.out.find("fitted: ring all-reduce, 16 points at 2 ranks") != std::string::npos);
    CHECK(r.out.find("compared with measurements: 3 of 3 rows") != std::string::npos);
  }
  SECTION("without it: refused, the flag named") {
    const auto r = with({"--fit", two});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--nccl-algorithm ring or tree") != std::string::npos);
  }
  SECTION("tree follows dbt's formula: fitting ring from it is refused with the fix") {
    const auto r = with({"--fit", eight, "--nccl-algorithm", "tree"});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("fit with --allreduce-algo dbt") != std::string::npos);
    const auto dbt = with({"--fit", eight, "--nccl-algorithm", "tree", "--allreduce-algo", "dbt"});
    INFO(describe(dbt));
    CHECK(dbt.exit_code == 0);
    CHECK(dbt.out.find("fitted: dbt all-reduce") != std::string::npos);
  }
  SECTION("an algorithm NCCL does not have") {
    const auto r = with({"--fit", two, "--nccl-algorithm", "rhd"});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--nccl-algorithm rhd") != std::string::npos);
  }
}
