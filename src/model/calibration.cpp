#include "ibscope/model/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ibscope/core/error.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/transformer.hpp"

namespace ibscope::model {
namespace {

double hardware_flops_per_gpu_microbatch(const Workload& w) {
  return training_flops(w, w.micro_batch).hardware / (static_cast<double>(w.tp) * w.pp);
}

Workload with_compute_s(Workload w, double compute_s_per_microbatch) {
  w.measured_compute_s_per_microbatch = compute_s_per_microbatch;
  return w;
}

}  // namespace

Calibration parse_calibration(std::string_view text) {
  const auto eq = text.find('=');
  const std::string_view key = text.substr(0, eq);
  Calibration c;
  if (eq == std::string_view::npos || (key != "step" && key != "microbatch")) {
    throw UsageError(fmt::format(
        "--calibrate '{}': expected step=SECONDS (a measured step) or microbatch=SECONDS (one "
        "micro-batch's compute on one GPU)",
        text));
  }
  c.kind = key == "step" ? Calibration::Kind::kStep : Calibration::Kind::kMicrobatch;
  const std::string value(text.substr(eq + 1));
  std::size_t used = 0;
  double s = 0;
  try {
    s = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(s) || !(s > 0)) {
    throw UsageError(
        fmt::format("--calibrate '{}': '{}' is not a time in seconds > 0", text, value));
  }
  c.seconds = s;
  return c;
}

CalibrationResult calibrate(const Workload& w, const NetworkModel& net, const Calibration& c) {
  if (!w.peak_tflops) {
    throw UsageError(fmt::format(
        "--calibrate: workload '{}' has no compute.peak_tflops: the calibrated fraction of "
        "peak needs one to carry to other layouts",
        w.name));
  }
  const double flops = hardware_flops_per_gpu_microbatch(w);
  const double peak = *w.peak_tflops * 1e12;
  double compute_s = c.seconds;
  if (c.kind == Calibration::Kind::kStep) {
    const double fastest = flops / peak;  // 100 % of peak
    const double step_at_peak = model_step(with_compute_s(w, fastest), net).step_s;
    if (step_at_peak > c.seconds) {
      throw UsageError(fmt::format(
          "--calibrate step={}: the model's step at 100 % of peak is already {:.6g} s (the "
          "network and the bubble alone): check the tiers and the layout",
          c.seconds, step_at_peak));
    }
    // The step grows with the compute time; find an upper bound, then bisect.
    double lo = fastest;
    double hi = fastest;
    for (int i = 0; model_step(with_compute_s(w, hi), net).step_s < c.seconds; ++i) {
      if (i == 200) {
        throw UsageError(
            fmt::format("--calibrate step={}: no compute time reproduces this step", c.seconds));
      }
      lo = hi;
      hi *= 2;
    }
    for (int i = 0; i < 200 && (hi - lo) > 1e-9 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      (model_step(with_compute_s(w, mid), net).step_s < c.seconds ? lo : hi) = mid;
    }
    compute_s = 0.5 * (lo + hi);
  }
  const double fraction = flops / (peak * compute_s);
  if (!(fraction > 0) || fraction > 1 + 1e-9) {
    throw UsageError(fmt::format(
        "--calibrate microbatch={}: {:.4g} hardware FLOPs per GPU in that time is {:.4g} of "
        "the {:g} TFLOP/s peak (must be in (0, 1])",
        c.seconds, flops, fraction, *w.peak_tflops));
  }
  CalibrationResult r;
  r.achieved_fraction = std::min(1.0, fraction);
  r.compute_s_per_microbatch = compute_s;
  r.workload = w;
  r.workload.achieved_fraction = r.achieved_fraction;
  r.workload.measured_compute_s_per_microbatch.reset();
  r.modelled_step_s = model_step(r.workload, net).step_s;
  return r;
}

}  // namespace ibscope::model
