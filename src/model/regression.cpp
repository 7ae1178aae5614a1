#include "ibscope/model/regression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/stats.hpp"

namespace ibscope::model {
namespace {

// A column whose part orthogonal to the earlier kept columns is below this fraction of its
// own norm adds nothing the others do not: it is treated as collinear and left out.
constexpr double kCollinearTolerance = 1e-9;
// The robust scale never falls below this (relative residuals: 1e-9 is far below any timing
// noise), so an exact fit of most points still gives the rest a finite, small weight.
constexpr double kScaleFloor = 1e-9;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return measure::percentile_sorted(v, 50);
}

struct WeightedSolve {
  std::vector<double> coef;            // per input column of the solve
  std::vector<std::size_t> collinear;  // indices (into the solve's columns) left out
};

// Least squares of (row_scale .* y) on (row_scale .* column_j) by modified Gram-Schmidt QR
// with one re-orthogonalisation pass (exact enough for <= a handful of columns), keeping
// columns in order and leaving out any that is collinear with those already kept.
WeightedSolve solve_scaled(const std::vector<const std::vector<double>*>& cols,
                           std::span<const double> y, const std::vector<double>& row_scale) {
  const std::size_t m = y.size();
  const std::size_t k = cols.size();
  std::vector<std::vector<double>> q;  // orthonormal columns kept
  std::vector<std::size_t> kept;       // which input column each q came from
  std::vector<std::vector<double>> r(k, std::vector<double>(k, 0.0));  // r[kept idx][input col]
  WeightedSolve out;
  out.coef.assign(k, 0.0);
  for (std::size_t j = 0; j < k; ++j) {
    std::vector<double> v(m);
    for (std::size_t i = 0; i < m; ++i) v[i] = row_scale[i] * (*cols[j])[i];
    const double norm0 = std::sqrt(dot(v, v));
    if (norm0 > 0) {
      for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t a = 0; a < q.size(); ++a) {
          const double proj = dot(q[a], v);
          r[a][j] += proj;
          for (std::size_t i = 0; i < m; ++i) v[i] -= proj * q[a][i];
        }
      }
    }
    const double norm = std::sqrt(dot(v, v));
    if (norm0 == 0 || norm <= kCollinearTolerance * norm0) {
      out.collinear.push_back(j);
      continue;
    }
    for (double& x : v) x /= norm;
    r[q.size()][j] = norm;
    q.push_back(std::move(v));
    kept.push_back(j);
  }
  std::vector<double> b(m);
  for (std::size_t i = 0; i < m; ++i) b[i] = row_scale[i] * y[i];
  std::vector<double> qtb(q.size());
  for (std::size_t a = 0; a < q.size(); ++a) qtb[a] = dot(q[a], b);
  // Back substitution on the kept columns only: R restricted to (kept rows, kept columns).
  for (std::size_t a = q.size(); a-- > 0;) {
    double s = qtb[a];
    for (std::size_t c = a + 1; c < q.size(); ++c) s -= r[a][kept[c]] * out.coef[kept[c]];
    out.coef[kept[a]] = s / r[a][kept[a]];
  }
  return out;
}

std::vector<double> fitted_values(const std::vector<std::vector<double>>& columns,
                                  const std::vector<double>& coef, std::size_t m) {
  std::vector<double> f(m, 0.0);
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (coef[j] == 0) continue;
    for (std::size_t i = 0; i < m; ++i) f[i] += coef[j] * columns[j][i];
  }
  return f;
}

struct IrlsFit {
  std::vector<double> coef;  // per input column; 0 for those not active
  std::vector<double> weights;
  std::vector<std::size_t> collinear;  // input column indices
  int iterations = 0;
};

IrlsFit irls(const std::vector<std::vector<double>>& columns, const std::vector<bool>& active,
             std::span<const double> y, const RobustOptions& o) {
  const std::size_t m = y.size();
  std::vector<const std::vector<double>*> cols;
  std::vector<std::size_t> index;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (!active[j]) continue;
    cols.push_back(&columns[j]);
    index.push_back(j);
  }
  IrlsFit fit;
  fit.coef.assign(columns.size(), 0.0);
  fit.weights.assign(m, 1.0);
  double scale_floor = kScaleFloor;
  if (!o.relative) {
    double ss = 0;
    for (double v : y) ss += v * v;
    scale_floor = kScaleFloor * std::max(std::sqrt(ss / static_cast<double>(m)),
                                         std::numeric_limits<double>::min());
  }
  const int max_iter = std::max(1, o.max_iterations);
  for (int it = 1; it <= max_iter; ++it) {
    std::vector<double> row_scale(m);
    for (std::size_t i = 0; i < m; ++i) {
      row_scale[i] = std::sqrt(fit.weights[i]) / (o.relative ? std::abs(y[i]) : 1.0);
    }
    const WeightedSolve s = solve_scaled(cols, y, row_scale);
    std::vector<double> coef(columns.size(), 0.0);
    for (std::size_t a = 0; a < index.size(); ++a) coef[index[a]] = s.coef[a];
    fit.collinear.clear();
    for (std::size_t a : s.collinear) fit.collinear.push_back(index[a]);
    fit.coef = coef;
    fit.iterations = it;
    const std::vector<double> f = fitted_values(columns, coef, m);
    std::vector<double> res(m), abs_res(m);
    for (std::size_t i = 0; i < m; ++i) {
      res[i] = (y[i] - f[i]) / (o.relative ? std::abs(y[i]) : 1.0);
      abs_res[i] = std::abs(res[i]);
    }
    // Scale: MAD about zero (the fit's residuals are centred by construction when an
    // intercept is present, and zero is the right centre when it is not).
    const double scale = std::max(measure::kMadToSigma * median_of(abs_res), scale_floor);
    double change = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const double u = abs_res[i] / scale;
      const double w = u <= o.huber_k ? 1.0 : o.huber_k / u;
      change = std::max(change, std::abs(w - fit.weights[i]));
      fit.weights[i] = w;
    }
    if (change < 1e-9) break;
  }
  return fit;
}

void check_inputs(const std::vector<std::vector<double>>& columns, std::span<const double> y,
                  const RobustOptions& o) {
  if (columns.empty()) throw UsageError("robust_least_squares: no columns to fit");
  if (y.size() < columns.size()) {
    throw UsageError(fmt::format("robust_least_squares: {} points cannot determine {} coefficients",
                                 y.size(), columns.size()));
  }
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (columns[j].size() != y.size()) {
      throw UsageError(fmt::format("robust_least_squares: column {} has {} values, y has {}", j,
                                   columns[j].size(), y.size()));
    }
    for (double v : columns[j]) {
      if (!std::isfinite(v)) {
        throw UsageError(fmt::format("robust_least_squares: column {} has a non-finite value", j));
      }
    }
  }
  for (double v : y) {
    if (!std::isfinite(v)) throw UsageError("robust_least_squares: y has a non-finite value");
    if (o.relative && v == 0) {
      throw UsageError("robust_least_squares: relative residuals need every y non-zero");
    }
  }
  if (!(o.huber_k > 0)) throw UsageError("robust_least_squares: huber_k must be > 0");
}

double column_norm(const std::vector<double>& c) { return std::sqrt(dot(c, c)); }

}  // namespace

RegressionResult robust_least_squares(const std::vector<std::vector<double>>& columns,
                                      std::span<const double> y, const RobustOptions& o) {
  check_inputs(columns, y, o);
  const std::size_t m = y.size();
  const std::size_t k = columns.size();
  std::vector<bool> active(k, true);
  std::vector<std::string> notes;
  IrlsFit fit;
  for (;;) {
    fit = irls(columns, active, y, o);
    for (std::size_t j : fit.collinear) {
      active[j] = false;
      notes.push_back(fmt::format("column {} collinear with earlier columns, left out", j));
    }
    if (!o.nonnegative) break;
    // Drop the most negative column, measured in units of y (coef times column norm) so the
    // choice does not depend on how the columns are scaled, then refit without it.
    std::size_t worst = k;
    double worst_value = 0;
    for (std::size_t j = 0; j < k; ++j) {
      if (!active[j] || fit.coef[j] >= 0) continue;
      const double v = fit.coef[j] * column_norm(columns[j]);
      if (v < worst_value) {
        worst_value = v;
        worst = j;
      }
    }
    if (worst == k) break;
    active[worst] = false;
    notes.push_back(
        fmt::format("column {} came out negative ({:.6g}), fixed at 0", worst, fit.coef[worst]));
    if (std::none_of(active.begin(), active.end(), [](bool a) { return a; })) {
      fit.coef.assign(k, 0.0);
      fit.weights.assign(m, 1.0);
      break;
    }
  }
  RegressionResult out;
  out.coef = fit.coef;
  out.weights = fit.weights;
  out.iterations = fit.iterations;
  out.dropped.resize(k);
  for (std::size_t j = 0; j < k; ++j) {
    out.dropped[j] = !active[j];
    if (!active[j]) out.coef[j] = 0;
  }
  for (std::size_t i = 0; i < notes.size(); ++i) out.note += (i ? "; " : "") + notes[i];
  const std::vector<double> f = fitted_values(columns, out.coef, m);
  out.residuals.resize(m);
  for (std::size_t i = 0; i < m; ++i) out.residuals[i] = y[i] - f[i];
  out.r2 = r_squared(y, f);
  return out;
}

double r_squared(std::span<const double> y, std::span<const double> fitted) {
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(std::max<std::size_t>(y.size(), 1));
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ss_res += (y[i] - fitted[i]) * (y[i] - fitted[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
  }
  if (ss_tot > 0) return 1.0 - ss_res / ss_tot;
  return ss_res == 0 ? 1.0 : 0.0;
}

}  // namespace ibscope::model
