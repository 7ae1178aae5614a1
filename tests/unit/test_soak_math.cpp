// The soak's pure parts: the constant-memory time histogram, window figures, drift, trend,
// RSS growth and the verdict, the default window and the duration/window checks, VmRSS parsing.

#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "common/byte_sizes.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/resident_memory.hpp"
#include "ibscope/measure/soak.hpp"
#include "ibscope/measure/stats.hpp"

using namespace ibscope;

using ibscope::test::kMiB;

namespace {

// A window with one case whose every iteration took `p50_us`, and the given RSS per rank.
measure::SoakWindow window(int index, double p50_us, std::vector<std::uint64_t> rss,
                           std::uint64_t wrong = 0, std::uint64_t size = 1 << 20) {
  measure::TimeHistogram h;
  for (int i = 0; i < 100; ++i) h.add(p50_us);
  measure::SoakWindow w;
  w.index = index;
  w.start_s = index * 10.0;
  w.end_s = (index + 1) * 10.0;
  w.cases.push_back(measure::make_case_window("ring", "float", "sum", size, h, 1.5, wrong));
  w.rss_bytes = std::move(rss);
  return w;
}

}  // namespace

TEST_CASE("soak histogram: exact count, min, max, mean, sd, percentiles within 0.6 %", "[soak]") {
  std::mt19937 rng(7);
  std::lognormal_distribution<double> dist(3.0, 1.0);
  std::vector<double> samples;
  measure::TimeHistogram h;
  for (int i = 0; i < 20000; ++i) {
    samples.push_back(dist(rng));
    h.add(samples.back());
  }
  const measure::Stats exact = measure::summarize(samples);
  const measure::Stats got = h.stats();
  CHECK(got.n == exact.n);
  CHECK(got.min == exact.min);
  CHECK(got.max == exact.max);
  CHECK(got.mean == Approx(exact.mean).epsilon(1e-9));
  CHECK(got.sd == Approx(exact.sd).epsilon(1e-6));
  CHECK(got.p50 == Approx(exact.p50).epsilon(0.006));
  CHECK(got.p99 == Approx(exact.p99).epsilon(0.006));
  CHECK(got.p99_9 == Approx(exact.p99_9).epsilon(0.006));
  h.clear();
  CHECK(h.count() == 0);
  CHECK(h.stats().n == 0);
  h.add(5);
  CHECK(h.stats().p50 == 5);  // clamped to [min, max]
  CHECK(h.stats().sd == 0);
}

TEST_CASE("soak histogram: times outside the bins land in the end bins", "[soak]") {
  measure::TimeHistogram h;
  h.add(0.001);
  h.add(0.001);
  h.add(5e9);
  CHECK(h.stats().min == 0.001);
  CHECK(h.stats().max == 5e9);
  CHECK(h.stats().p50 == 0.001);
  CHECK(h.stats().p99 == 5e9);
}

TEST_CASE("soak window: busbw from the mean time and the factor", "[soak]") {
  measure::TimeHistogram h;
  h.add(1000);
  h.add(3000);  // mean 2000 us
  const auto w = measure::make_case_window("rd", "half", "max", 2'000'000, h, 1.5, 3);
  CHECK(w.iterations == 2);
  CHECK(w.algbw_gbps == Approx(1.0));  // 2e6 B / 2 ms = 1 GB/s
  CHECK(w.busbw_gbps == Approx(1.5));
  CHECK(w.wrong == 3);
  CHECK(w.algorithm == "rd");
}

TEST_CASE("soak summary: a flat soak passes with ratio 1 and no trend", "[soak]") {
  std::vector<measure::SoakWindow> ws;
  for (int i = 0; i < 6; ++i) ws.push_back(window(i, 100, {100 * kMiB, 120 * kMiB}));
  const auto s = measure::summarize_soak(ws, {});
  CHECK(s.pass);
  CHECK(s.reasons.empty());
  CHECK(s.windows == 6);
  CHECK(s.steady_windows == 5);
  REQUIRE(s.cases.size() == 1);
  CHECK(s.cases[0].first_window == 1);
  CHECK(s.cases[0].last_window == 5);
  CHECK(s.cases[0].p50_ratio == Approx(1));
  CHECK(s.cases[0].busbw_ratio == Approx(1));
  CHECK(s.cases[0].p50_trend_per_hour == Approx(0).margin(1e-12));
  CHECK(s.rss_growth_bytes == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("soak summary: warm-up growth is not counted, later growth is, per rank", "[soak]") {
  // Window 0 ends at 100 MiB; after it rank 1 grows by 9 MiB, rank 0 by 1 MiB.
  std::vector<measure::SoakWindow> ws = {window(0, 100, {100 * kMiB, 100 * kMiB}),
                                         window(1, 100, {101 * kMiB, 104 * kMiB}),
                                         window(2, 100, {101 * kMiB, 109 * kMiB})};
  const auto s = measure::summarize_soak(ws, {.max_rss_growth_bytes = 8 * kMiB, .max_drift = 0});
  CHECK_FALSE(s.pass);
  REQUIRE(s.rss_growth_bytes.size() == 2);
  CHECK(s.rss_growth_bytes[0] == static_cast<std::int64_t>(kMiB));
  CHECK(s.rss_growth_bytes[1] == static_cast<std::int64_t>(9 * kMiB));
  REQUIRE(s.reasons.size() == 1);
  CHECK_THAT(s.reasons[0], Catch::Contains("RSS of rank 1 grew by 9.0 MiB"));
  CHECK_THAT(s.reasons[0], Catch::Contains("--max-rss-growth 8 MiB"));
  // The same soak with a larger limit passes; shrinking memory never fails.
  CHECK(measure::summarize_soak(ws, {.max_rss_growth_bytes = 9 * kMiB, .max_drift = 0}).pass);
  ws[2].rss_bytes = {50 * kMiB, 50 * kMiB};
  const auto shrunk = measure::summarize_soak(ws, {});
  CHECK(shrunk.pass);
  CHECK(shrunk.rss_growth_bytes[0] == -static_cast<std::int64_t>(50 * kMiB));
}

TEST_CASE("soak summary: any wrong element fails, counted over every window", "[soak]") {
  std::vector<measure::SoakWindow> ws = {window(0, 100, {kMiB}, 2), window(1, 100, {kMiB}),
                                         window(2, 100, {kMiB}, 1)};
  const auto s = measure::summarize_soak(ws, {});
  CHECK_FALSE(s.pass);
  CHECK(s.wrong == 3);
  REQUIRE_FALSE(s.reasons.empty());
  CHECK_THAT(s.reasons[0], Catch::Contains("3 wrong elements"));
}

TEST_CASE("soak summary: drift and trend are reported, judged only with --max-drift", "[soak]") {
  // p50 rises 100 -> 150 us over windows 1..5 (10 s each): +50 % in 40 s.
  std::vector<measure::SoakWindow> ws = {window(0, 500, {kMiB})};
  for (int i = 1; i <= 5; ++i) ws.push_back(window(i, 100 + 12.5 * (i - 1), {kMiB}));
  const auto report = measure::summarize_soak(ws, {});
  CHECK(report.pass);
  REQUIRE(report.cases.size() == 1);
  const auto& d = report.cases[0];
  CHECK(d.first_p50_us == Approx(100).epsilon(0.006));
  CHECK(d.last_p50_us == Approx(150).epsilon(0.006));
  CHECK(d.p50_ratio == Approx(1.5).epsilon(0.01));
  CHECK(d.busbw_ratio == Approx(1 / 1.5).epsilon(0.01));
  // 12.5 us per 10 s = 4500 us/h, relative to 100 us: 45 per hour.
  CHECK(d.p50_trend_per_hour == Approx(45).epsilon(0.01));
  CHECK(d.busbw_trend_per_hour < 0);

  const auto judged =
      measure::summarize_soak(ws, {.max_rss_growth_bytes = 8 * kMiB, .max_drift = 0.2});
  CHECK_FALSE(judged.pass);
  REQUIRE(judged.reasons.size() == 2);
  CHECK_THAT(judged.reasons[0], Catch::Contains("p50 time drifted"));
  CHECK_THAT(judged.reasons[1], Catch::Contains("busbw drifted"));
  CHECK(measure::summarize_soak(ws, {.max_rss_growth_bytes = 8 * kMiB, .max_drift = 0.6}).pass);
}

TEST_CASE("soak: least-squares slope", "[soak]") {
  const std::vector<double> x = {0, 1, 2, 3}, y = {1, 3, 5, 7};
  CHECK(measure::least_squares_slope(x, y) == Approx(2));
  CHECK(measure::least_squares_slope(std::vector<double>{1}, std::vector<double>{1}) == 0);
  CHECK(measure::least_squares_slope(std::vector<double>{2, 2}, std::vector<double>{1, 5}) == 0);
}

TEST_CASE("soak: default window and the duration/window checks", "[soak]") {
  CHECK(measure::default_soak_window_s(600) == 30);    // 10 min: 30 s
  CHECK(measure::default_soak_window_s(7200) == 360);  // 2 h: duration/20
  CHECK(measure::default_soak_window_s(6) == 3);       // short: at most duration/2
  CHECK(measure::default_soak_window_s(120) == 30);
  CHECK_NOTHROW(measure::check_soak_times(120, 10));
  CHECK_NOTHROW(measure::check_soak_times(20, 10));
  CHECK_THROWS_AS(measure::check_soak_times(10, 20), UsageError);
  CHECK_THROWS_WITH(measure::check_soak_times(10, 20), Catch::Contains("longer than --duration"));
  CHECK_THROWS_WITH(measure::check_soak_times(15, 10), Catch::Contains("at least two windows"));
}

TEST_CASE("VmRSS from /proc/<pid>/status", "[soak]") {
  CHECK(parse_vm_rss_bytes("Name:\tx\nVmPeak:\t  999 kB\nVmRSS:\t   1234 kB\nThreads: 1\n") ==
        1234u * 1024);
  CHECK(parse_vm_rss_bytes("VmRSS: 8 kB\n") == 8u * 1024);
  CHECK_FALSE(parse_vm_rss_bytes("Name:\tx\n").has_value());
  CHECK_FALSE(parse_vm_rss_bytes("VmRSS:\tlots kB\n").has_value());
  CHECK_FALSE(parse_vm_rss_bytes("VmRSS:\t12 MB\n").has_value());
  CHECK(resident_bytes() > 0);  // this process, on Linux
}

TEST_CASE("soak summary: a soak that closed fewer than two windows cannot pass", "[soak]") {
  // Under load a batch sized from the earlier rate ran past every window's end: one window,
  // nothing to compare it with, and the leak test read rss_growth_bytes[1] of an empty list.
  const std::vector<measure::SoakWindow> one{window(0, 10, {100 * kMiB, 100 * kMiB})};
  const auto s = measure::summarize_soak(one, {});
  CHECK_FALSE(s.pass);
  CHECK(s.steady_windows == 0);
  CHECK(s.rss_growth_bytes.empty());
  REQUIRE(s.reasons.size() == 1);
  CHECK_THAT(s.reasons[0], Catch::Contains("only 1 window closed"));
  const auto none = measure::summarize_soak(std::vector<measure::SoakWindow>{}, {});
  CHECK_FALSE(none.pass);
  CHECK(none.windows == 0);
  CHECK_THAT(none.reasons.at(0), Catch::Contains("only 0 windows closed"));
}
