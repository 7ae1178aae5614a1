#pragma once
/// Piecewise alpha-beta fit of one measured curve: time t(n) = alpha + beta n over message
/// sizes n, split where the transport's protocol changes (UCX eager -> rendezvous shows as a
/// jump in alpha or slope). Break points lie between measured sizes and are kept only when
/// they pay for themselves under a BIC-like penalty, so noise does not create segments. Each
/// segment is a robust fit (model/regression.hpp) on relative error. Pure: no I/O.
/// Method, penalty and limits: docs/model.md, "Fits (`ibscope fit`)".

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ibscope/model/regression.hpp"

namespace ibscope::model {

/// An algorithm's cost formula (collectives/collective.hpp cost_s), linear in the per-link
/// parameters, as the coefficient of each at n bytes: cost = alpha_count(n) * alpha +
/// wire_bytes(n) * beta + reduced_bytes(n) * gamma. reduced_bytes may be empty (no reduction).
struct CostCoefficients {
  std::function<double(double n_bytes)> alpha_count;    ///< messages on the critical path
  std::function<double(double n_bytes)> wire_bytes;     ///< bytes sent on the critical path
  std::function<double(double n_bytes)> reduced_bytes;  ///< bytes reduced on it (or empty)
};

/// Per-link parameters of one segment, through the algorithm's cost formula.
struct LinkParams {
  double alpha_s = 0;              ///< per message, per hop
  double beta_eff_s_per_byte = 0;  ///< per wire byte, reduction folded in (gamma_folded)
  double bw_eff_gbps = 0;          ///< 1 / beta_eff / 1e9; 0 when beta_eff is 0 (unresolved)
  /// The algorithm also reduces: one curve cannot separate beta from gamma, so beta_eff =
  /// beta + gamma * reduced_bytes / wire_bytes (the reduction charged to the wire).
  bool gamma_folded = false;
  double r2 = 0;  ///< of this fit on the segment's times
};

/// One piece of the curve: points [first, last] (indices into CurveFit's sorted points).
struct CurveSegment {
  std::size_t first = 0, last = 0;
  double min_bytes = 0, max_bytes = 0;  ///< smallest and largest measured size it covers
  double alpha_s = 0;                   ///< intercept, seconds
  double beta_s_per_byte = 0;           ///< slope, seconds per byte (of the curve's n)
  double bw_gbps = 0;                   ///< 1 / beta / 1e9; 0 when beta is 0 (unresolved)
  double r2 = 0;                        ///< of the segment's fit, on its times
  double max_abs_residual_pct = 0;      ///< worst |measured - fitted| / measured, percent
  std::optional<LinkParams> link;       ///< when CostCoefficients were given
  std::string note;                     ///< from the regression (dropped columns), or empty
};

struct CurveFitOptions {
  int max_segments = 3;  ///< at most this many pieces (1 disables break detection)
  int min_points = 3;    ///< points per segment at least
  double penalty = 2.0;  ///< multiplies the BIC penalty: 3 ln m per extra segment, times this
  /// Relative noise floor: the criterion never believes a fit better than this (0.1 %), so a
  /// noiseless curve is not split for a rounding-level gain.
  double noise_floor = 1e-3;
  RobustOptions robust;  ///< for every segment's regression
};

struct CurveFit {
  std::vector<double> bytes;           ///< measured sizes, ascending
  std::vector<double> measured_s;      ///< measured time at each size
  std::vector<double> fitted_s;        ///< the piecewise fit at each size
  std::vector<double> residual_pct;    ///< (measured - fitted) / measured, percent
  std::vector<CurveSegment> segments;  ///< ascending, covering every point once
  double r2 = 0;                       ///< of the whole piecewise fit, on the times
  double max_abs_residual_pct = 0;     ///< worst over all points
  double criterion = 0;                ///< the BIC-like score of the chosen split (lower is better)

  /// Fitted seconds at `n_bytes`: the segment covering it; between two segments' sizes, the
  /// one on the same side of their geometric midpoint; outside the measured range, the
  /// nearest segment (extrapolated).
  double fitted_at(double n_bytes) const;
};

/// Fits the curve. `bytes` and `time_s` pair up; sizes must be distinct and > 0 (any order),
/// times finite and > 0. `cost`, when given, adds per-link parameters to every segment.
/// Throws UsageError for fewer than `min_points` (>= 2) points, sizes that repeat, or values
/// that are not finite and positive.
CurveFit fit_curve(std::span<const double> bytes, std::span<const double> time_s,
                   const CurveFitOptions& options = {},
                   const std::optional<CostCoefficients>& cost = std::nullopt);

}  // namespace ibscope::model
