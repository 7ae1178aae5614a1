#include "ibscope/model/curve_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/stats.hpp"

namespace ibscope::model {
namespace {

struct Points {
  std::vector<double> x, y;  // ascending x
};

Points sorted_points(std::span<const double> bytes, std::span<const double> time_s,
                     const CurveFitOptions& o) {
  if (bytes.size() != time_s.size()) {
    throw UsageError(fmt::format("fit_curve: {} sizes but {} times", bytes.size(), time_s.size()));
  }
  const std::size_t need = static_cast<std::size_t>(std::max(2, o.min_points));
  if (bytes.size() < need) {
    throw UsageError(fmt::format("fit_curve: {} sizes, at least {} needed", bytes.size(), need));
  }
  std::vector<std::size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return bytes[a] < bytes[b]; });
  Points p;
  for (std::size_t i : order) {
    if (!std::isfinite(bytes[i]) || !(bytes[i] > 0) || !std::isfinite(time_s[i]) ||
        !(time_s[i] > 0)) {
      throw UsageError(fmt::format("fit_curve: size {} B, time {} s: both must be finite and > 0",
                                   bytes[i], time_s[i]));
    }
    if (!p.x.empty() && p.x.back() == bytes[i]) {
      throw UsageError(fmt::format("fit_curve: size {} B appears twice", bytes[i]));
    }
    p.x.push_back(bytes[i]);
    p.y.push_back(time_s[i]);
  }
  return p;
}

double inverse_gbps(double s_per_byte) { return s_per_byte > 0 ? 1.0 / s_per_byte / 1e9 : 0.0; }

CurveSegment fit_segment(const Points& p, std::size_t first, std::size_t last,
                         const CurveFitOptions& o) {
  const std::size_t m = last - first + 1;
  std::vector<double> ones(m, 1.0);
  std::vector<double> x(p.x.begin() + static_cast<std::ptrdiff_t>(first),
                        p.x.begin() + static_cast<std::ptrdiff_t>(last + 1));
  const std::span<const double> y(p.y.data() + first, m);
  const RegressionResult r = robust_least_squares({ones, x}, y, o.robust);
  CurveSegment s;
  s.first = first;
  s.last = last;
  s.min_bytes = p.x[first];
  s.max_bytes = p.x[last];
  s.alpha_s = r.coef[0];
  s.beta_s_per_byte = r.coef[1];
  s.bw_gbps = inverse_gbps(s.beta_s_per_byte);
  s.r2 = r.r2;
  s.note = r.note;
  return s;
}

// Relative residuals of a segment's fit on its own points, appended to `out`.
void relative_residuals(const Points& p, const CurveSegment& s, std::vector<double>& out) {
  for (std::size_t i = s.first; i <= s.last; ++i) {
    out.push_back((p.y[i] - (s.alpha_s + s.beta_s_per_byte * p.x[i])) / p.y[i]);
  }
}

struct Candidate {
  std::vector<CurveSegment> segments;
  double criterion = std::numeric_limits<double>::infinity();
};

// BIC for Gaussian relative errors, m ln(v) + k ln m, with k = 3S - 1 parameters for S
// segments (alpha and beta each, and S - 1 break positions), scaled by `penalty`. v is a
// winsorised variance: each squared residual is capped at (kClip * robust scale)^2 of the same
// candidate, so one stalled size can neither hide a real break (by dominating every
// candidate's sum) nor buy a segment of its own; v is floored at noise_floor^2 so exact fits
// compare by their parameter count alone.
constexpr double kClip = 5.0;

double criterion(const Points& p, const std::vector<CurveSegment>& segs, const CurveFitOptions& o) {
  std::vector<double> r;
  for (const auto& s : segs) relative_residuals(p, s, r);
  std::vector<double> abs_r(r.size());
  std::transform(r.begin(), r.end(), abs_r.begin(), [](double v) { return std::abs(v); });
  std::sort(abs_r.begin(), abs_r.end());
  const double scale =
      std::max(measure::kMadToSigma * measure::percentile_sorted(abs_r, 50), o.noise_floor);
  const double cap = kClip * scale;
  double v = 0;
  for (double x : abs_r) v += std::min(x, cap) * std::min(x, cap);
  const double m = static_cast<double>(p.x.size());
  v /= m;
  const double k = 3.0 * static_cast<double>(segs.size()) - 1.0;
  return m * std::log(std::max(v, o.noise_floor * o.noise_floor)) + o.penalty * k * std::log(m);
}

// Every split of [0, n) into at most max_segments runs of at least min_points, as the index
// where each segment after the first starts.
void enumerate_splits(std::size_t n, std::size_t min_points, int segments_left, std::size_t start,
                      std::vector<std::size_t>& starts,
                      const std::function<void(const std::vector<std::size_t>&)>& visit) {
  visit(starts);  // the rest [start, n) as one segment
  if (segments_left <= 1) return;
  for (std::size_t next = start + min_points; next + min_points <= n; ++next) {
    starts.push_back(next);
    enumerate_splits(n, min_points, segments_left - 1, next, starts, visit);
    starts.pop_back();
  }
}

std::optional<LinkParams> link_params(const Points& p, const CurveSegment& s,
                                      const CostCoefficients& cost, const CurveFitOptions& o) {
  if (!cost.alpha_count || !cost.wire_bytes) return std::nullopt;
  std::vector<double> a, b;
  bool reduces = false;
  for (std::size_t i = s.first; i <= s.last; ++i) {
    a.push_back(cost.alpha_count(p.x[i]));
    b.push_back(cost.wire_bytes(p.x[i]));
    if (cost.reduced_bytes && cost.reduced_bytes(p.x[i]) > 0) reduces = true;
  }
  const std::span<const double> y(p.y.data() + s.first, s.last - s.first + 1);
  const RegressionResult r = robust_least_squares({a, b}, y, o.robust);
  LinkParams l;
  l.alpha_s = r.coef[0];
  l.beta_eff_s_per_byte = r.coef[1];
  l.bw_eff_gbps = inverse_gbps(l.beta_eff_s_per_byte);
  l.gamma_folded = reduces;
  l.r2 = r.r2;
  return l;
}

}  // namespace

double CurveFit::fitted_at(double n_bytes) const {
  if (segments.empty()) return 0;
  std::size_t k = 0;
  while (k + 1 < segments.size() &&
         n_bytes > std::sqrt(segments[k].max_bytes * segments[k + 1].min_bytes)) {
    ++k;
  }
  return segments[k].alpha_s + segments[k].beta_s_per_byte * n_bytes;
}

CurveFit fit_curve(std::span<const double> bytes, std::span<const double> time_s,
                   const CurveFitOptions& options, const std::optional<CostCoefficients>& cost) {
  const Points p = sorted_points(bytes, time_s, options);
  const std::size_t n = p.x.size();
  const std::size_t min_points = static_cast<std::size_t>(std::max(2, options.min_points));

  Candidate best;
  std::vector<std::size_t> starts;
  enumerate_splits(n, min_points, std::max(1, options.max_segments), 0, starts,
                   [&](const std::vector<std::size_t>& s) {
                     Candidate c;
                     std::size_t first = 0;
                     for (std::size_t k = 0; k <= s.size(); ++k) {
                       const std::size_t last = k < s.size() ? s[k] - 1 : n - 1;
                       c.segments.push_back(fit_segment(p, first, last, options));
                       first = last + 1;
                     }
                     c.criterion = criterion(p, c.segments, options);
                     // Ties (noiseless data at the floor) keep the earlier, simpler split.
                     if (c.criterion < best.criterion) best = std::move(c);
                   });

  CurveFit fit;
  fit.bytes = p.x;
  fit.measured_s = p.y;
  fit.segments = std::move(best.segments);
  fit.criterion = best.criterion;
  for (auto& s : fit.segments) {
    for (std::size_t i = s.first; i <= s.last; ++i) {
      const double f = s.alpha_s + s.beta_s_per_byte * p.x[i];
      const double pct = 100.0 * (p.y[i] - f) / p.y[i];
      fit.fitted_s.push_back(f);
      fit.residual_pct.push_back(pct);
      s.max_abs_residual_pct = std::max(s.max_abs_residual_pct, std::abs(pct));
    }
    fit.max_abs_residual_pct = std::max(fit.max_abs_residual_pct, s.max_abs_residual_pct);
    if (cost) s.link = link_params(p, s, *cost, options);
  }
  fit.r2 = r_squared(fit.measured_s, fit.fitted_s);
  return fit;
}

}  // namespace ibscope::model
