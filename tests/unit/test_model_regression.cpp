// Robust least squares (model/regression.hpp): known coefficients recovered from synthetic
// data with seeded noise, outliers ignored, exact r2 on noiseless data, collinear and negative
// columns dropped with a note, and the error cases.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/model/regression.hpp"

using Catch::Matchers::Contains;
using ibscope::UsageError;
using ibscope::model::robust_least_squares;
using ibscope::model::RobustOptions;

namespace {

// Sizes 8 B .. 8 MiB (powers of 2), the span a sweep covers.
std::vector<double> sweep_sizes() {
  std::vector<double> n;
  for (double b = 8; b <= 8.0 * 1024 * 1024; b *= 2) n.push_back(b);
  return n;
}

// t = alpha + beta n, each point multiplied by (1 + N(0, sigma)).
std::vector<double> alpha_beta_times(const std::vector<double>& n, double alpha, double beta,
                                     double sigma, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<double> t;
  for (double x : n) t.push_back((alpha + beta * x) * (1.0 + (sigma > 0 ? noise(rng) : 0.0)));
  return t;
}

}  // namespace

TEST_CASE("noiseless alpha-beta data: exact coefficients and r2 == 1", "[model]") {
  const auto n = sweep_sizes();
  const double alpha = 5e-6, beta = 1.0 / 10e9;  // 5 us, 10 GB/s
  const auto t = alpha_beta_times(n, alpha, beta, 0, 1);
  const auto r = robust_least_squares({std::vector<double>(n.size(), 1.0), n}, t);
  CHECK(r.coef[0] == Approx(alpha).epsilon(1e-9));
  CHECK(r.coef[1] == Approx(beta).epsilon(1e-9));
  CHECK(r.r2 == Approx(1.0).epsilon(1e-12));
  for (double res : r.residuals) CHECK(std::abs(res) < 1e-15);
  for (double w : r.weights) CHECK(w == 1.0);
  CHECK(r.note.empty());
}

TEST_CASE("2% relative noise: alpha and beta within 3%", "[model]") {
  const auto n = sweep_sizes();
  const double alpha = 20e-6, beta = 1.0 / 3e9;
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    const auto t = alpha_beta_times(n, alpha, beta, 0.02, seed);
    const auto r = robust_least_squares({std::vector<double>(n.size(), 1.0), n}, t);
    CHECK(r.coef[0] == Approx(alpha).epsilon(0.03));
    CHECK(r.coef[1] == Approx(beta).epsilon(0.03));
    CHECK(r.r2 > 0.99);
  }
}

TEST_CASE("outliers get small weights and do not move the fit", "[model]") {
  const auto n = sweep_sizes();
  const double alpha = 10e-6, beta = 1.0 / 5e9;
  auto t = alpha_beta_times(n, alpha, beta, 0.01, 7);
  // Three points 5x too slow (a stalled run). On relative residuals a slow point's residual
  // is bounded by 1, so plain least squares moves only a few percent; the robust fit must
  // still do better than that and give the outliers small weights.
  for (std::size_t i : {1u, 3u, 17u}) t[i] *= 5;
  const auto r = robust_least_squares({std::vector<double>(n.size(), 1.0), n}, t);
  CHECK(r.coef[0] == Approx(alpha).epsilon(0.02));
  CHECK(r.coef[1] == Approx(beta).epsilon(0.02));
  for (std::size_t i : {1u, 3u, 17u}) CHECK(r.weights[i] < 0.05);

  RobustOptions plain;
  plain.huber_k = 1e9;  // every weight 1: ordinary least squares on relative residuals
  const auto ls = robust_least_squares({std::vector<double>(n.size(), 1.0), n}, t, plain);
  const auto error = [&](const std::vector<double>& c) {
    return std::max(std::abs(c[0] / alpha - 1), std::abs(c[1] / beta - 1));
  };
  CHECK(error(r.coef) < error(ls.coef) / 2);
}

TEST_CASE("absolute residuals fit too", "[model]") {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6};
  std::vector<double> y;
  for (double v : x) y.push_back(3 + 2 * v);
  y[3] += 100;  // one gross outlier
  RobustOptions o;
  o.relative = false;
  const auto r = robust_least_squares({std::vector<double>(x.size(), 1.0), x}, y, o);
  CHECK(r.coef[0] == Approx(3).epsilon(1e-6));
  CHECK(r.coef[1] == Approx(2).epsilon(1e-6));
  CHECK(r.residuals[3] == Approx(100).epsilon(1e-6));
}

TEST_CASE("a negative coefficient is fixed at 0 and the rest refitted", "[model]") {
  // y = 2 x exactly, minus a constant: the intercept would come out negative.
  const std::vector<double> x = {1, 2, 4, 8, 16};
  std::vector<double> y;
  for (double v : x) y.push_back(2 * v - 0.5);
  const auto r = robust_least_squares({std::vector<double>(x.size(), 1.0), x}, y);
  CHECK(r.coef[0] == 0);
  CHECK(r.dropped[0]);
  CHECK_FALSE(r.dropped[1]);
  CHECK(r.coef[1] > 0);
  CHECK_THAT(r.note, Contains("column 0") && Contains("negative"));

  RobustOptions free;
  free.nonnegative = false;
  const auto f = robust_least_squares({std::vector<double>(x.size(), 1.0), x}, y, free);
  CHECK(f.coef[0] == Approx(-0.5).epsilon(1e-9));
  CHECK(f.coef[1] == Approx(2).epsilon(1e-9));
}

TEST_CASE("collinear columns: the first is kept, the other set to 0 with a note", "[model]") {
  const std::vector<double> x = {1, 2, 3, 5, 8};
  std::vector<double> x3, y;
  for (double v : x) {
    x3.push_back(3 * v);
    y.push_back(1 + 4 * v);
  }
  const auto r = robust_least_squares({std::vector<double>(x.size(), 1.0), x, x3}, y);
  CHECK(r.coef[0] == Approx(1).epsilon(1e-9));
  CHECK(r.coef[1] == Approx(4).epsilon(1e-9));
  CHECK(r.coef[2] == 0);
  CHECK(r.dropped[2]);
  CHECK_THAT(r.note, Contains("column 2 collinear"));
}

TEST_CASE("bad inputs are UsageErrors", "[model]") {
  const std::vector<double> y = {1, 2, 3};
  CHECK_THROWS_AS(robust_least_squares({}, y), UsageError);
  CHECK_THROWS_WITH(robust_least_squares({{1, 1}}, y), Contains("column 0 has 2 values"));
  CHECK_THROWS_WITH(robust_least_squares({{1, 1, 1}, {1, 2, 3}, {1, 4, 9}, {1, 8, 27}}, y),
                    Contains("3 points cannot determine 4 coefficients"));
  CHECK_THROWS_WITH(robust_least_squares({{1, NAN, 1}}, y), Contains("non-finite"));
  const std::vector<double> bad_y = {1, INFINITY, 3};
  CHECK_THROWS_WITH(robust_least_squares({{1, 1, 1}}, bad_y), Contains("non-finite"));
  const std::vector<double> zero_y = {1, 0, 3};
  CHECK_THROWS_WITH(robust_least_squares({{1, 1, 1}}, zero_y), Contains("non-zero"));
}
