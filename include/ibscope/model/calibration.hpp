#pragma once
/// Calibrating the compute of a workload on one measured figure: a whole step's time, or the
/// compute of one micro-batch on one GPU. The result is one number, the fraction of peak the
/// compute achieves, which then carries to every other layout and scale (the FLOPs per GPU
/// change with t, p and b; the fraction stays). Pure: the network comes in as a NetworkModel.
/// Rules: docs/model.md, "Calibration".

#include <string_view>

#include "ibscope/model/network.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {

struct Calibration {
  enum class Kind { kStep, kMicrobatch };
  Kind kind = Kind::kStep;
  double seconds = 0;  ///< the measured step, or one micro-batch's compute on one GPU
};

/// "step=SECONDS" or "microbatch=SECONDS" (seconds > 0, finite). Throws UsageError naming the
/// text.
Calibration parse_calibration(std::string_view text);

struct CalibrationResult {
  double achieved_fraction = 0;         ///< solved fraction of peak, in (0, 1]
  double compute_s_per_microbatch = 0;  ///< what it gives for this workload's layout
  double modelled_step_s = 0;           ///< the model's step with the solved fraction
  Workload workload;                    ///< the input with achieved_fraction set, no measured time
};

/// Solves achieved_fraction so that the model reproduces `c`: for kMicrobatch directly
/// (hardware FLOPs of one micro-batch / (t p) / (peak x seconds)); for kStep by bisection on
/// the compute time per micro-batch (the step grows with it) to a relative 1e-9. Requires
/// w.peak_tflops. Throws UsageError without a peak, when the measured step is shorter than the
/// model's at 100 % of peak, or when the solved fraction is not in (0, 1].
CalibrationResult calibrate(const Workload& w, const NetworkModel& net, const Calibration& c);

}  // namespace ibscope::model
