// nccl-tests' stdout as input (results/nccl_tests.hpp): the published outputs of
// tests/fixtures/nccl-tests/ (SOURCES.md) parsed and checked against figures read off the files,
// the refusals with line and column of cut and garbled copies, the loader's choice by content,
// and an alpha-beta fit of a fixture's all-reduce curve against the fixture's own times.

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ibscope/model/results_fits.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/nccl_tests.hpp"

using Catch::Matchers::Contains;
namespace results = ibscope::results;

namespace {

std::string fixture_path(const std::string& name) {
  return std::string(IBSCOPE_NCCL_TESTS_FIXTURES) + "/" + name;
}

std::string fixture(const std::string& name) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const results::NcclTestsRow& row_at(const results::NcclTestsRun& run, std::uint64_t size,
                                    bool in_place) {
  for (const auto& r : run.rows) {
    if (r.size_bytes == size && r.in_place == in_place) return r;
  }
  FAIL("no row of " << size << " bytes");
  return run.rows.front();
}

// The error `text` gets, as "line:column: message".
results::NcclTestsParseError error_of(const std::string& text, const std::string& source) {
  try {
    (void)results::parse_nccl_tests(text, source);
  } catch (const results::NcclTestsParseError& e) {
    return e;
  }
  FAIL("accepted: " << source);
  throw std::logic_error("unreachable");
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("nccl-tests: 16 H100 ranks on 2 hosts, all_reduce_perf 8 B..8 GiB", "[nccl-tests]") {
  const auto out =
      results::parse_nccl_tests(fixture("all_reduce_perf-h100-16ranks.txt"), "h100.txt");
  REQUIRE(out.runs.size() == 1);
  const auto& run = out.runs[0];
  // Named by the echoed command line: this output has no "Collective test starting" line.
  CHECK(run.collective == "all_reduce");
  CHECK(run.program == "all_reduce_perf");
  CHECK(run.version.empty());
  CHECK(run.threads == 1);
  CHECK(run.gpus_per_thread == 1);
  CHECK(run.iters == 20);
  CHECK(run.warmup_iters == 5);
  REQUIRE(run.ranks.size() == 16);
  CHECK(run.rank_count() == 16);
  CHECK(run.ranks[0].host == "ztan-mig-235z");
  CHECK(run.ranks[15].host == "ztan-mig-gq73");
  CHECK(run.ranks[15].device == 7);
  CHECK(run.ranks[15].device_name == "NVIDIA H100 80GB HBM3");
  CHECK(run.rows.size() == 62);  // 31 sizes, out of place and in place
  const auto& big = row_at(run, 8589934592ULL, false);
  CHECK(big.count == 2147483648ULL);
  CHECK(big.type == "float");
  CHECK(big.redop == "sum");
  CHECK(big.root == -1);
  CHECK(big.time_us == 47535);
  CHECK(big.algbw_gbps == Approx(180.71));
  CHECK(big.busbw_gbps == Approx(338.82));
  CHECK(big.wrong == std::optional<std::uint64_t>(0));
  CHECK(big.line == 62);
  const auto& big_in = row_at(run, 8589934592ULL, true);
  CHECK(big_in.time_us == 47743);
  CHECK(big_in.busbw_gbps == Approx(337.35));
  CHECK(row_at(run, 8, false).time_us == Approx(135.8));
  CHECK(run.out_of_bounds == std::optional<std::uint64_t>(0));
  CHECK(run.avg_busbw_gbps == Approx(70.742));
}

TEST_CASE("nccl-tests: GH200 outputs of nccl-tests 2.17 and 2.18", "[nccl-tests]") {
  SECTION("2 ranks, version line, 'Collective test starting'") {
    const auto out =
        results::parse_nccl_tests(fixture("all_reduce_perf-gh200-2ranks.txt"), "gh200.txt");
    REQUIRE(out.runs.size() == 1);
    const auto& run = out.runs[0];
    CHECK(run.version == "2.18.2");
    CHECK(run.collective == "all_reduce");
    CHECK(run.rank_count() == 2);
    CHECK(run.ranks[1].host == "nid007109");
    CHECK(run.rows.size() == 16);
    CHECK(row_at(run, 134217728, false).time_us == Approx(5871.07));
    CHECK(row_at(run, 134217728, true).algbw_gbps == Approx(22.88));
    CHECK(run.avg_busbw_gbps == Approx(14.9966));
  }
  SECTION("8 ranks, launcher warnings before the banner") {
    const auto out =
        results::parse_nccl_tests(fixture("all_reduce_perf-gh200-8ranks.txt"), "gh200-8.txt");
    REQUIRE(out.runs.size() == 1);
    const auto& run = out.runs[0];
    CHECK(run.rank_count() == 8);
    CHECK(run.rows.size() == 50);
    CHECK(row_at(run, 8, false).time_us == Approx(17.93));
    CHECK(row_at(run, 524288, true).time_us == Approx(349.6));
    CHECK(row_at(run, 134217728, false).busbw_gbps == Approx(122.57));
  }
}

TEST_CASE("nccl-tests: a pasted table without its banner is refused at its header",
          "[nccl-tests]") {
  const auto e = error_of(fixture("sendrecv_perf-a100-8gpus-pasted-table.txt"), "sendrecv.txt");
  CHECK(e.line() == 4);
  CHECK(e.column() == 1);
  CHECK_THAT(std::string(e.what()), Contains("sendrecv.txt:4:1:") && Contains("nThread"));
}

TEST_CASE("nccl-tests: cut and garbled copies are refused with line and column", "[nccl-tests]") {
  const std::string text = fixture("all_reduce_perf-h100-16ranks.txt");
  SECTION("cut inside a row") {
    const auto at = text.find("float     sum      -1   1261.6");
    const std::string cut = text.substr(0, at + 9);  // "...  16777216     float    "
    const auto e = error_of(cut, "cut.txt");
    CHECK(e.line() == 55);
    // One past the row's end.
    CHECK(e.column() == static_cast<int>(cut.size() - cut.rfind('\n')));
    CHECK_THAT(std::string(e.what()), Contains("cut.txt:55:") && Contains("3 field(s)"));
  }
  SECTION("cut after a whole row: no footer") {
    const auto at = text.find("# Out of bounds");
    const auto e = error_of(text.substr(0, at), "nofooter.txt");
    CHECK(e.line() == 63);
    CHECK_THAT(std::string(e.what()), Contains("without '# Out of bounds values' after 31 row"));
  }
  SECTION("cut after the banner") {
    const auto at = text.find("#\n# Using devices");
    const auto e = error_of(text.substr(0, at), "banner.txt");
    CHECK_THAT(std::string(e.what()), Contains("ends after the banner of line 9"));
  }
  SECTION("a garbled number") {
    const auto e = error_of(replace_once(text, "1261.6", "12x1.6"), "garbled.txt");
    CHECK(e.line() == 55);
    CHECK(e.column() == 56);
    CHECK_THAT(std::string(e.what()), Contains("time: expected a number, got '12x1.6'"));
  }
  SECTION("a garbled banner") {
    const auto e = error_of(replace_once(text, "nGpus 1", "nGpus one"), "banner2.txt");
    CHECK(e.line() == 9);
    CHECK(e.column() == 19);
  }
  SECTION("a banner with more GPUs than a process drives") {
    const auto e =
        error_of(replace_once(text, "nThread 1 nGpus 1", "nThread 2147483647 nGpus 2"), "big.txt");
    CHECK(e.line() == 9);
    CHECK_THAT(std::string(e.what()), Contains("more than 65536 GPUs in one process"));
  }
  SECTION("not nccl-tests at all") {
    const auto e = error_of("hello\nworld\n", "hello.txt");
    CHECK(e.line() == 1);
  }
  SECTION("no program named anywhere") {
    const std::string bare = text.substr(text.find("# nThread"));
    const auto e = error_of(bare, "output.txt");
    CHECK_THAT(std::string(e.what()), Contains("cannot tell which nccl-tests program"));
    // The file's name says it.
    CHECK(results::parse_nccl_tests(bare, "/tmp/all_gather_perf.log").runs[0].collective ==
          "all_gather");
  }
}

TEST_CASE("nccl-tests: older and newer layouts, N/A, other programs (synthetic)", "[nccl-tests]") {
  // Hand-written in the layouts nccl-tests' writeResultHeader prints, to cover what the
  // published fixtures do not: "N/A" (-c 0), the "error" column and missing redop/root of
  // before 2.x, several runs in one file, alltoall.
  const std::string text = R"(# Collective test starting: alltoall_perf
# nThread 1 nGpus 2 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 0 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   100 on hosta device  0 [0x1b] NVIDIA H100
#  Rank  1 Group  0 Pid   100 on hosta device  1 [0x1c] NVIDIA H100
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           128     float    none      -1    10.00    0.10    0.05    N/A    11.00    0.09    0.05    N/A
        2048           256     float    none      -1    12.00    0.17    0.09    N/A    13.00    0.16    0.08    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.07
./build/broadcast_perf -b 8 -e 16 -g 2
# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#   Rank  0 Pid  1821213 on oldhost device  0 [0x00] Tesla V100
#   Rank  1 Pid  1821213 on oldhost device  1 [0x00] Tesla V100
#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
           8             2   float    16.57    0.00    0.00  0e+00    13.83    0.00    0.00  0e+00
          16             4   float    17.00    0.00    0.00  0e+00    14.00    0.00    0.00  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.00
)";
  const auto out = results::parse_nccl_tests(text, "two.txt");
  REQUIRE(out.runs.size() == 2);
  CHECK(out.runs[0].collective == "alltoall");
  CHECK(out.runs[0].rows.size() == 4);
  CHECK_FALSE(out.runs[0].rows[0].wrong.has_value());
  CHECK(out.runs[1].collective == "broadcast");
  CHECK(out.runs[1].rows.size() == 4);
  CHECK(out.runs[1].rows[1].in_place);
  CHECK(out.runs[1].rows[1].time_us == Approx(13.83));
  CHECK(out.runs[1].rows[0].redop == "none");
  CHECK(out.runs[1].ranks[1].device_name == "Tesla V100");

  // As a results document: both runs are ibscope collectives (alltoall since issue 38).
  const auto doc = results::to_document(out, "two.txt");
  CHECK(doc.collectives.rows.size() == 8);
  CHECK(doc.collectives.rows[0].collective == ibscope::Collective::kAlltoall);
  CHECK(doc.collectives.rows[4].collective == ibscope::Collective::kBroadcast);
  CHECK(doc.collectives.rows[4].root == 0);
  CHECK(doc.warnings.empty());
}

TEST_CASE("nccl-tests: the loader reads a file by its content", "[nccl-tests]") {
  const auto doc = results::load(fixture_path("all_reduce_perf-h100-16ranks.txt"));
  CHECK(doc.tool.name == "nccl-tests");
  CHECK(doc.job.ranks == 16);
  CHECK(doc.job.hosts.size() == 16);
  REQUIRE(doc.collectives.rows.size() == 62);
  const auto& r = doc.collectives.rows.back();
  CHECK(r.collective == ibscope::Collective::kAllreduce);
  CHECK(r.algorithm == "nccl");
  CHECK(r.mem == ibscope::memory::MemKind::kCuda);
  CHECK(r.ranks == 16);
  CHECK(r.in_place);
  CHECK(r.time_us == 47743);
  CHECK(r.iteration_us.p50 == 47743);
  CHECK(r.busbw_gbps == Approx(337.35));

  const auto path = std::filesystem::temp_directory_path() / "ibscope-nccl-cut.txt";
  {
    std::ofstream f(path);
    const std::string text = fixture("all_reduce_perf-gh200-2ranks.txt");
    f << text.substr(0, text.find("# Out of bounds"));
  }
  CHECK_THROWS_WITH(results::load(path), Contains(path.string() + ":21:1:"));
  std::filesystem::remove(path);
}

TEST_CASE("nccl-tests: alpha-beta fit of a fixture's all-reduce curve", "[nccl-tests]") {
  // The H100 curve, out of place: piecewise alpha-beta (model/curve_fit.hpp) on nccl-tests'
  // times; each fitted time within 25 % of the fixture's own at 1 MiB and above, and the last
  // segment's bandwidth near the fixture's algbw x 2(p-1)/p... as time per byte of the curve.
  const auto doc = results::load(fixture_path("all_reduce_perf-h100-16ranks.txt"));
  ibscope::model::FitReport report;
  ibscope::model::fit_results(doc, "h100.txt", {}, report);
  const ibscope::model::CurveResult* out_of_place = nullptr;
  for (const auto& c : report.curves) {
    if (!c.key.in_place) out_of_place = &c;
  }
  REQUIRE(out_of_place != nullptr);
  const auto& fit = out_of_place->fit;
  CHECK(fit.bytes.size() == 31);
  for (std::size_t i = 0; i < fit.bytes.size(); ++i) {
    if (fit.bytes[i] < (1 << 20)) continue;
    INFO("size " << fit.bytes[i] << " measured " << fit.measured_s[i] << " fitted "
                 << fit.fitted_s[i]);
    CHECK(std::abs(fit.fitted_s[i] - fit.measured_s[i]) <= 0.25 * fit.measured_s[i]);
  }
  // The largest sizes: bandwidth of the last segment within 25 % of the fixture's algbw there.
  CHECK(fit.segments.back().bw_gbps == Approx(180.71).epsilon(0.25));
}

TEST_CASE("nccl-tests: JSON output (-J, synthetic after the writer in src/util.cu)",
          "[nccl-tests]") {
  // No JSON file written by a user was found published (docs/nccl-tests.md): this one follows
  // the writer of nccl-tests 2.19.6 (JSON_FILE_VERSION 3) key for key; 2 processes of 1 GPU.
  const std::string text = R"({"version": 3, "start_time": "2026-12-07 11:00:00", "args":
 ["/opt/nccl-tests/build/all_gather_perf", "-b", "1M", "-e", "2M", "-J", "ag.json"],
 "env": ["PATH=/usr/bin"], "nccl_version": 22703,
 "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1048576, "maximum_bytes": 2097152,
  "step_factor": 2, "warmup_iters": 5, "iterations": 20, "aggregated_iterations": 1,
  "validation": 1, "graph": 0, "blocking_collectives": false, "per_iter_timing": false,
  "per_iter_skip": 0, "parallel_init": false,
  "devices": [{"rank": 0, "group": 0, "pid": 11, "hostname": "gpu-a", "device": 0,
               "device_hex": "0000:1b:00", "device_info": "NVIDIA H100 80GB HBM3"},
              {"rank": 1, "group": 0, "pid": 12, "hostname": "gpu-b", "device": 0,
               "device_hex": "0000:1b:00", "device_info": "NVIDIA H100 80GB HBM3"}]},
 "results": [
  {"size": 1048576, "count": 131072, "type": "float", "redop": "none", "root": "    -1",
   "out_of_place": {"time": 40.5, "alg_bw": 25.89, "bus_bw": 12.95, "nwrong": 0},
   "in_place": {"time": 39.0, "alg_bw": 26.89, "bus_bw": 13.44, "nwrong": 0},
   "actual_iterations": 20, "experiment_name": ""},
  {"size": 2097152, "count": 262144, "type": "float", "redop": "none", "root": "    -1",
   "out_of_place": {"time": 70.0, "alg_bw": 29.96, "bus_bw": 14.98, "nwrong": null},
   "in_place": {"time": 69.0, "alg_bw": 30.39, "bus_bw": 15.20, "nwrong": null},
   "actual_iterations": 20, "experiment_name": ""}],
 "out_of_bounds": {"count": 0, "okay": true},
 "average_bus_bandwidth": {"bandwidth": 14.14, "okay": "unchecked"},
 "errors": [], "end_time": "2026-12-07 11:00:01"})";
  REQUIRE(results::looks_like_nccl_tests_json(text));
  CHECK_FALSE(results::looks_like_nccl_tests(text));
  const auto out = results::parse_nccl_tests_json(text, "ag.json");
  REQUIRE(out.runs.size() == 1);
  const auto& run = out.runs[0];
  CHECK(run.collective == "all_gather");
  CHECK(run.rank_count() == 2);
  CHECK(run.ranks[1].host == "gpu-b");
  CHECK(run.iters == 20);
  REQUIRE(run.rows.size() == 4);
  CHECK(run.rows[0].time_us == 40.5);
  CHECK(run.rows[0].root == -1);
  CHECK(run.rows[1].in_place);
  CHECK(run.rows[1].busbw_gbps == Approx(13.44));
  CHECK_FALSE(run.rows[2].wrong.has_value());
  CHECK(run.avg_busbw_gbps == Approx(14.14));

  const auto doc = results::to_document(out, "ag.json");
  CHECK(doc.collectives.rows.size() == 4);
  CHECK(doc.collectives.rows[0].collective == ibscope::Collective::kAllgather);
  CHECK(doc.job.hosts.size() == 2);

  // A field of the wrong type: refused with its JSON path.
  std::string bad = text;
  bad.replace(bad.find("\"time\": 70.0"), 12, "\"time\": \"x\"");
  CHECK_THROWS_WITH(results::parse_nccl_tests_json(bad, "bad.json"),
                    Contains("bad.json: results[1].out_of_place.time: expected a number"));
  // The loader, by content.
  const auto path = std::filesystem::temp_directory_path() / "ibscope-nccl-ag.json";
  {
    std::ofstream f(path);
    f << text;
  }
  CHECK(results::load(path).collectives.rows.size() == 4);
  std::filesystem::remove(path);
}
