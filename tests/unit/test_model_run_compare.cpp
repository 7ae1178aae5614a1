// Row-by-row comparison of two runs (model/run_compare.hpp): the robust spread, the noise band,
// slower/faster/noise symmetric in the ratio, the threshold, matching by key and size (and across
// algorithms), p2p rows, and an nccl-tests fixture against itself.

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "ibscope/model/run_compare.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/results/loader.hpp"

using namespace ibscope;

namespace {

measure::CollectiveRow cmp_row(const std::string& algorithm, std::uint64_t bytes,
                               std::vector<double> samples_us) {
  measure::CollectiveRow r;
  r.collective = Collective::kAllreduce;
  r.algorithm = algorithm;
  r.op = ReduceOp::kSum;
  r.ranks = 2;
  r.size_bytes = bytes;
  r.samples_us = std::move(samples_us);
  r.iteration_us = measure::summarize(r.samples_us);
  r.time_us = r.iteration_us.mean;
  r.busbw_gbps = static_cast<double>(bytes) / (r.iteration_us.p50 * 1e3);
  return r;
}

results::Document doc_of(std::vector<measure::CollectiveRow> rows) {
  results::Document d;
  for (auto& r : rows) d.add_row(r);
  return d;
}

}  // namespace

TEST_CASE("compare: the robust spread of a row's samples", "[model][compare]") {
  CHECK(model::relative_spread(std::vector<double>{}) == 0);
  CHECK(model::relative_spread(std::vector<double>{1, 100}) == 0);  // under 3 samples
  CHECK(model::relative_spread(std::vector<double>{10, 10, 10, 10}) == 0);
  // median 10, |x - 10| = {1, 0, 1, 0, 50}: MAD 1 -> 1.4826 / 10; the outlier does not count.
  CHECK(model::relative_spread(std::vector<double>{9, 10, 11, 10, 60}) ==
        Approx(measure::kMadToSigma * 0.1));
}

TEST_CASE("compare: noise, slower, faster and the threshold", "[model][compare]") {
  const std::vector<double> steady = {100, 100, 100, 100, 100};
  const std::vector<double> noisy = {80, 100, 120, 100, 90, 110};  // MAD 10: spread 0.148
  model::CompareOptions o;                                         // threshold 10 %, floor 5 %, k 3
  const auto a = doc_of({cmp_row("ring", 1024, steady), cmp_row("ring", 2048, steady),
                         cmp_row("ring", 4096, noisy), cmp_row("ring", 8192, steady),
                         cmp_row("rd", 1024, steady)});
  const auto b = doc_of({cmp_row("ring", 1024, {104, 104, 104}),    // +4 %: inside the floor
                         cmp_row("ring", 2048, {108, 108, 108}),    // +8 %: slower, under 10 %
                         cmp_row("ring", 4096, {140, 140, 140}),    // +40 %: inside 3 x 0.148
                         cmp_row("ring", 8192, {1, 1, 1}),          // -99 %: faster
                         cmp_row("tree", 1024, {500, 500, 500})});  // no match
  const auto c = model::compare_runs(a, b, o);
  REQUIRE(c.rows.size() == 4);
  CHECK(c.only_a == 1);
  CHECK(c.only_b == 1);
  CHECK(c.rows[0].change == model::RowChange::kNoise);
  CHECK(c.rows[0].band_pct == Approx(5));
  CHECK(c.rows[1].change == model::RowChange::kSlower);
  CHECK_FALSE(c.rows[1].beyond_threshold);
  CHECK(c.rows[1].change_pct == Approx(8));
  CHECK(c.rows[1].bw_change_pct == Approx(100.0 / 108 * 100 - 100));
  CHECK(c.rows[2].change == model::RowChange::kNoise);
  CHECK(c.rows[2].band_pct == Approx(3 * 100 * measure::kMadToSigma * 0.1));
  CHECK(c.rows[3].change == model::RowChange::kFaster);
  CHECK(c.failures() == 0);
  CHECK(c.count(model::RowChange::kSlower) == 1);

  // The same the other way round: +8 % from B to A is -7.4 % (noise... outside 5 %: faster),
  // -99 % becomes +9900 %: a regression beyond the threshold.
  const auto back = model::compare_runs(b, a, o);
  CHECK(back.rows[1].change == model::RowChange::kFaster);
  CHECK(back.rows[3].change == model::RowChange::kSlower);
  CHECK(back.rows[3].beyond_threshold);
  CHECK(back.failures() == 1);
}

TEST_CASE("compare: rows of different algorithms match only when asked", "[model][compare]") {
  const auto a = doc_of({cmp_row("ring", 1024, {10, 10, 10})});
  auto nccl = cmp_row("nccl", 1024, {20, 20, 20});
  nccl.mem = memory::MemKind::kCuda;
  const auto b = doc_of({nccl});
  CHECK(model::compare_runs(a, b, {}).rows.empty());
  model::CompareOptions any;
  any.any_algorithm = true;
  const auto c = model::compare_runs(a, b, any);
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].key == "allreduce/*/float/sum/p2/out");
  CHECK(c.rows[0].a_label == "ring host");
  CHECK(c.rows[0].b_label == "nccl cuda");
  CHECK(c.rows[0].change_pct == Approx(100));
}

TEST_CASE("compare: p2p rows by test, pair, window and size", "[model][compare]") {
  results::Document a, b;
  measure::P2pRow r;
  r.test = "latency";
  r.rank_a = 0;
  r.rank_b = 1;
  r.size_bytes = 8;
  r.samples_us = {2, 2, 2, 2};
  r.time_us = measure::summarize(r.samples_us);
  a.add_row(r);
  r.samples_us = {4, 4, 4, 4};
  r.time_us = measure::summarize(r.samples_us);
  b.add_row(r);
  const auto c = model::compare_runs(a, b, {});
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].section == "p2p");
  CHECK(c.rows[0].key == "p2p/latency/0-1/w1/host");
  CHECK(c.rows[0].change == model::RowChange::kSlower);
  CHECK(c.rows[0].beyond_threshold);
}

TEST_CASE("compare: an nccl-tests output against itself and against another size range",
          "[model][compare][nccl-tests]") {
  const std::string dir = IBSCOPE_NCCL_TESTS_FIXTURES;
  const auto two = results::load(dir + "/all_reduce_perf-gh200-2ranks.txt");
  const auto c = model::compare_runs(two, two, {});
  CHECK(c.rows.size() == 16);
  CHECK(c.count(model::RowChange::kNoise) == 16);
  CHECK(c.rows[0].band_pct == Approx(5));  // one sample per row: the floor
  // 8 ranks against 2: no row in common (the rank count is part of a row's key).
  const auto eight = results::load(dir + "/all_reduce_perf-gh200-8ranks.txt");
  const auto d = model::compare_runs(two, eight, {});
  CHECK(d.rows.empty());
  CHECK(d.only_a == 16);
  CHECK(d.only_b == 50);
}

TEST_CASE("compare: the report's comparison section, then the two runs' curves",
          "[model][compare][report]") {
  const auto a = doc_of({cmp_row("ring", 1024, {10, 10, 10}), cmp_row("ring", 4096, {20, 20, 20})});
  const auto b = doc_of({cmp_row("ring", 1024, {30, 30, 30}), cmp_row("ring", 4096, {20, 20, 20})});
  const auto c = model::compare_runs(a, b, {});
  output::ReportOptions o;
  o.comparison = c;
  const std::string page = output::html_report({{"a.json", "A a", a}, {"b.json", "B b", b}}, o);
  const auto at = page.find("<h2>Comparison: B against A</h2>");
  REQUIRE(at != std::string::npos);
  CHECK(at < page.find("<h2>Collectives: busbw and latency vs message size</h2>"));
  CHECK(page.find("REGRESSION: 1 row(s) slower beyond the threshold.") != std::string::npos);
  CHECK(page.find("<td>+200.0</td>") != std::string::npos);
  CHECK(page.find("SLOWER (beyond the threshold)") != std::string::npos);
  // Both runs are series of the same curves.
  CHECK(page.find("A a: ring") != std::string::npos);
  CHECK(page.find("B b: ring") != std::string::npos);
  // Without a comparison, no such section.
  CHECK(output::html_report({{"a.json", "a", a}}, {}).find("Comparison: B against A") ==
        std::string::npos);
}

TEST_CASE("compare: verbs probe rows, latency by time and bandwidth by size / bw",
          "[model][compare]") {
  results::Document a, b;
  measure::ProbeRow lat;
  lat.test = "write_lat";
  lat.rank_b = 1;
  lat.device_a = lat.device_b = "rxe0:1";
  lat.size_bytes = 2;
  lat.samples_us = {3, 3, 3};
  lat.time_us = measure::summarize(lat.samples_us);
  measure::ProbeRow bw = lat;
  bw.test = "write_bw";
  bw.size_bytes = 1 << 20;
  bw.samples_us.clear();
  bw.time_us = {};
  bw.bw_gbps = 10;
  a.add_row(lat);
  a.add_row(bw);
  bw.bw_gbps = 5;  // half the bandwidth: twice the time per message
  b.add_row(lat);
  b.add_row(bw);
  const auto c = model::compare_runs(a, b, {});
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].section == "probe");
  CHECK(c.rows[0].key == "verbs/write_lat/0-1/rxe0:1->rxe0:1/q1");
  CHECK(c.rows[0].change == model::RowChange::kNoise);
  CHECK(c.rows[1].change_pct == Approx(100));
  CHECK(c.rows[1].bw_change_pct == Approx(-50));
  CHECK(c.rows[1].change == model::RowChange::kSlower);
}
