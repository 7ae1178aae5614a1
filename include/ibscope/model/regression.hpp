#pragma once
/// Robust linear least squares for the model's fits: y ~ sum_j coef_j * columns[j], Huber
/// M-estimation by iteratively reweighted least squares (IRLS), on relative residuals by
/// default (measured times span decades, so an absolute fit would ignore the small sizes),
/// with optional non-negative coefficients. Pure: no I/O. Method: docs/model.md, "Fits".

#include <span>
#include <string>
#include <vector>

namespace ibscope::model {

struct RobustOptions {
  double huber_k = 1.345;   ///< Huber threshold, in robust-scale (1.4826 MAD) units
  int max_iterations = 50;  ///< IRLS iterations at most
  bool relative = true;     ///< minimise relative residuals (y_i - f_i)/y_i: times span decades
  bool nonnegative = true;  ///< every coefficient >= 0 (active set: drop a negative column, refit)
};

struct RegressionResult {
  std::vector<double> coef;       ///< one per column; 0 for a column dropped (see `dropped`)
  double r2 = 0;                  ///< coefficient of determination of the final fit, on y
  std::vector<double> residuals;  ///< y_i - fitted_i, units of y
  std::vector<double> weights;    ///< final robust weights in [0,1]
  int iterations = 0;             ///< IRLS iterations of the final active set
  /// Per column: true when it was left out of the fit, either collinear with an earlier
  /// column (the earlier one is kept) or negative under `nonnegative`. Its coef is 0.
  std::vector<bool> dropped;
  std::string note;  ///< empty, or why columns were dropped, e.g. "column 1 collinear with 0"
};

/// Robust (Huber IRLS) least squares y ~ sum_j coef_j * columns[j]. Each column has y.size()
/// values. With `relative`, every y_i must be non-zero. Throws UsageError when there are no
/// columns, fewer points than columns, sizes differ, values are not finite, or (relative) a y_i
/// is 0.
RegressionResult robust_least_squares(const std::vector<std::vector<double>>& columns,
                                      std::span<const double> y, const RobustOptions& o = {});

/// 1 - SS_res / SS_tot of `fitted` against `y` (same length); 1 when both sums are 0, 0 when
/// only SS_tot is (a constant y fitted imperfectly).
double r_squared(std::span<const double> y, std::span<const double> fitted);

}  // namespace ibscope::model
