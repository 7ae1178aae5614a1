// Piecewise alpha-beta fits (model/curve_fit.hpp): parameters recovered from synthetic curves
// with seeded noise, an eager/rendezvous-like jump found at the right size, noise and single
// outliers not split, per-link parameters through a cost formula, and the error cases.

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/model/curve_fit.hpp"

using Catch::Matchers::Contains;
using ibscope::UsageError;
using ibscope::model::CostCoefficients;
using ibscope::model::CurveFitOptions;
using ibscope::model::fit_curve;

namespace {

std::vector<double> sizes(double from, double to) {
  std::vector<double> n;
  for (double b = from; b <= to; b *= 2) n.push_back(b);
  return n;
}

// Two regimes: below `break_bytes` eager (alpha0, beta0), from it on rendezvous (alpha1,
// beta1); every time multiplied by 1 + N(0, sigma).
std::vector<double> two_regime_times(const std::vector<double>& n, double break_bytes,
                                     double alpha0, double beta0, double alpha1, double beta1,
                                     double sigma, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<double> t;
  for (double x : n) {
    const double clean = x < break_bytes ? alpha0 + beta0 * x : alpha1 + beta1 * x;
    t.push_back(clean * (1.0 + (sigma > 0 ? noise(rng) : 0.0)));
  }
  return t;
}

}  // namespace

TEST_CASE("noiseless line: one segment, exact parameters, r2 == 1", "[model]") {
  const auto n = sizes(8, 8 << 20);
  const auto t = two_regime_times(n, 1e300, 4e-6, 1 / 12e9, 0, 0, 0, 1);
  const auto f = fit_curve(n, t);
  REQUIRE(f.segments.size() == 1);
  CHECK(f.segments[0].alpha_s == Approx(4e-6).epsilon(1e-9));
  CHECK(f.segments[0].bw_gbps == Approx(12).epsilon(1e-9));
  CHECK(f.r2 == Approx(1.0).epsilon(1e-12));
  CHECK(f.max_abs_residual_pct < 1e-9);
  CHECK(f.segments[0].min_bytes == 8);
  CHECK(f.segments[0].max_bytes == 8 << 20);
  CHECK(f.fitted_at(1e6) == Approx(4e-6 + 1e6 / 12e9));
}

TEST_CASE("pure noise (3 %) on a line is not split: 200 seeds", "[model]") {
  const auto n = sizes(8, 64 << 20);
  for (unsigned seed = 1; seed <= 200; ++seed) {
    const auto t = two_regime_times(n, 1e300, 20e-6, 1 / 3e9, 0, 0, 0.03, seed);
    const auto f = fit_curve(n, t);
    INFO("seed " << seed);
    CHECK(f.segments.size() == 1);
    CHECK(f.segments[0].alpha_s == Approx(20e-6).epsilon(0.05));
    CHECK(f.segments[0].bw_gbps == Approx(3).epsilon(0.05));
    CHECK(f.r2 > 0.98);
  }
}

TEST_CASE("eager -> rendezvous jump: two segments with the break at the right size", "[model]") {
  // Eager up to 8 KiB: 3 us + 2 GB/s (copies); rendezvous from 16 KiB: 15 us + 10 GB/s.
  const auto n = sizes(8, 8 << 20);
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const auto t = two_regime_times(n, 16384, 3e-6, 1 / 2e9, 15e-6, 1 / 10e9, 0.02, seed);
    const auto f = fit_curve(n, t);
    INFO("seed " << seed);
    REQUIRE(f.segments.size() == 2);
    CHECK(f.segments[0].max_bytes == 8192);
    CHECK(f.segments[1].min_bytes == 16384);
    CHECK(f.segments[0].alpha_s == Approx(3e-6).epsilon(0.05));
    CHECK(f.segments[1].alpha_s == Approx(15e-6).epsilon(0.1));
    CHECK(f.segments[1].bw_gbps == Approx(10).epsilon(0.05));
    CHECK(f.r2 > 0.99);
    // Between the segments the switch is at the geometric midpoint of 8 KiB and 16 KiB.
    CHECK(f.fitted_at(9000) ==
          Approx(f.segments[0].alpha_s + f.segments[0].beta_s_per_byte * 9000));
    CHECK(f.fitted_at(16000) ==
          Approx(f.segments[1].alpha_s + f.segments[1].beta_s_per_byte * 16000));
  }
}

TEST_CASE("noiseless three regimes: three segments, exact", "[model]") {
  const auto n = sizes(8, 8 << 20);
  std::vector<double> t;
  for (double x : n) {
    if (x < 256)
      t.push_back(1e-6 + x / 1e9);
    else if (x < 65536)
      t.push_back(5e-6 + x / 4e9);
    else
      t.push_back(30e-6 + x / 11e9);
  }
  const auto f = fit_curve(n, t);
  REQUIRE(f.segments.size() == 3);
  CHECK(f.segments[0].max_bytes == 128);
  CHECK(f.segments[1].min_bytes == 256);
  CHECK(f.segments[2].min_bytes == 65536);
  CHECK(f.segments[2].bw_gbps == Approx(11).epsilon(1e-6));
  CHECK(f.max_abs_residual_pct < 1e-6);
  CurveFitOptions one;
  one.max_segments = 1;
  const auto single = fit_curve(n, t, one);
  CHECK(single.segments.size() == 1);
  CHECK(single.max_abs_residual_pct > 10);
}

TEST_CASE("one slow point does not create a segment or move the fit", "[model]") {
  const auto n = sizes(8, 8 << 20);
  auto t = two_regime_times(n, 1e300, 10e-6, 1 / 5e9, 0, 0, 0.01, 3);
  t[10] *= 4;
  const auto f = fit_curve(n, t);
  REQUIRE(f.segments.size() == 1);
  CHECK(f.segments[0].alpha_s == Approx(10e-6).epsilon(0.03));
  CHECK(f.segments[0].bw_gbps == Approx(5).epsilon(0.03));
  CHECK(f.residual_pct[10] > 60);
}

TEST_CASE("per-link parameters through a ring all-reduce cost formula", "[model]") {
  // Ring all-reduce on p = 4: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
  const int p = 4;
  const double alpha = 2e-6, beta = 1 / 10e9, gamma = 1 / 20e9;
  const auto n = sizes(1024, 64 << 20);
  std::vector<double> t;
  for (double x : n)
    t.push_back(2 * (p - 1) * alpha + (2.0 * (p - 1) / p * beta + (p - 1.0) / p * gamma) * x);
  CostCoefficients cost;
  cost.alpha_count = [](double) { return 2.0 * (p - 1); };
  cost.wire_bytes = [](double x) { return 2.0 * (p - 1) / p * x; };
  cost.reduced_bytes = [](double x) { return (p - 1.0) / p * x; };
  const auto f = fit_curve(n, t, {}, cost);
  REQUIRE(f.segments.size() == 1);
  REQUIRE(f.segments[0].link);
  const auto& l = *f.segments[0].link;
  CHECK(l.alpha_s == Approx(alpha).epsilon(1e-9));
  CHECK(l.gamma_folded);
  // gamma charged to the wire: beta + gamma * reduced / wire = beta + gamma / 2.
  CHECK(l.beta_eff_s_per_byte == Approx(beta + gamma / 2).epsilon(1e-9));
  CHECK(l.bw_eff_gbps == Approx(1 / (beta + gamma / 2) / 1e9).epsilon(1e-9));
}

TEST_CASE("fit_curve input errors", "[model]") {
  const std::vector<double> n = {8, 16};
  const std::vector<double> t = {1e-6, 2e-6};
  CHECK_THROWS_WITH(fit_curve(n, t), Contains("2 sizes, at least 3 needed"));
  const std::vector<double> n3 = {8, 16, 16};
  const std::vector<double> t3 = {1e-6, 2e-6, 3e-6};
  CHECK_THROWS_WITH(fit_curve(n3, t3), Contains("size 16 B appears twice"));
  const std::vector<double> bad = {1e-6, 0, 3e-6};
  const std::vector<double> n4 = {8, 16, 32};
  CHECK_THROWS_AS(fit_curve(n4, bad), UsageError);
  CHECK_THROWS_WITH(fit_curve(n4, t), Contains("3 sizes but 2 times"));
}
