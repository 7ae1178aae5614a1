#include "ibscope/accept/accept_options.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"

namespace ibscope::accept {

AcceptTransport parse_accept_transport(std::string_view text) {
  if (text == "auto") return AcceptTransport::kAuto;
  if (text == "ucx") return AcceptTransport::kUcx;
  if (text == "verbs") return AcceptTransport::kVerbs;
  throw UsageError(fmt::format("--transport '{}': expected auto, ucx or verbs", text));
}

void validate(const AcceptOptions& o) {
  if (!(o.expect_line_gbit >= 0)) {
    throw UsageError(
        fmt::format("--expect-gbps {}: must be a rate in Gb/s (> 0)", o.expect_line_gbit));
  }
  if (!(o.thresholds.min_fraction > 0 && o.thresholds.min_fraction <= 1)) {
    throw UsageError(
        fmt::format("--min-fraction {}: must be in (0, 1]", o.thresholds.min_fraction));
  }
  if (!(o.thresholds.mad_k > 0)) {
    throw UsageError(fmt::format("--mad-k {}: must be > 0", o.thresholds.mad_k));
  }
  if (!(o.thresholds.max_latency_ratio == 0 || o.thresholds.max_latency_ratio >= 1)) {
    throw UsageError(fmt::format("--max-latency-ratio {}: must be >= 1 (0 turns it off)",
                                 o.thresholds.max_latency_ratio));
  }
  if (o.retests < 0 || o.retests > 10) {
    throw UsageError(fmt::format("--retests {}: must be 0..10", o.retests));
  }
  auto positive = [](long long v, std::string_view flag) {
    if (v < 1) throw UsageError(fmt::format("{} {}: must be >= 1", flag, v));
  };
  positive(static_cast<long long>(o.lat_bytes), "--lat-size");
  positive(static_cast<long long>(o.bw_bytes), "--bw-size");
  positive(o.lat_iters, "--lat-iters");
  positive(o.bw_iters, "--bw-iters");
  positive(o.bw_window, "--bw-window");
  positive(o.verbs_bw_iters, "--verbs-bw-iters");
  positive(o.verbs_lat_iters, "--verbs-lat-iters");
  positive(o.allreduce_iters, "--ar-iters");
  const PatternThresholds& pt = o.pattern_thresholds;
  if (!(pt.min_fraction > 0 && pt.min_fraction <= 1)) {
    throw UsageError(fmt::format("--pattern-min-fraction {}: must be in (0, 1]", pt.min_fraction));
  }
  if (!(pt.min_fairness >= 0 && pt.min_fairness <= 1)) {
    throw UsageError(fmt::format("--min-fairness {}: must be in [0, 1]", pt.min_fairness));
  }
  if (o.loopback) {
    if (!(o.loopback_thresholds.slow_pct > 0 && o.loopback_thresholds.slow_pct < 100)) {
      throw UsageError(fmt::format("--loopback-slow-pct {}: must be in (0, 100)",
                                   o.loopback_thresholds.slow_pct));
    }
    if (!(o.loopback_thresholds.min_fraction >= 0 && o.loopback_thresholds.min_fraction <= 1)) {
      throw UsageError(fmt::format("--loopback-min-fraction {}: must be in [0, 1] (0 turns it off)",
                                   o.loopback_thresholds.min_fraction));
    }
    probes::validate(o.loopback_probe);
    if (o.loopback_probe.budget_s >= o.timeout_s) {
      throw UsageError(fmt::format(
          "--loopback-budget {:g} s: must be below --timeout ({:g} s), which bounds the wait "
          "of the ranks that do not measure",
          o.loopback_probe.budget_s, o.timeout_s));
    }
  }
  if (o.warmup < 0 || o.allreduce_warmup < 0) throw UsageError("warm-up counts must be >= 0");
  if (o.allreduce && o.allreduce_bytes.empty())
    throw UsageError("--ar-sizes: give at least one size");
  for (auto b : o.allreduce_bytes) positive(static_cast<long long>(b), "--ar-sizes");
  if (o.congestion.enabled) validate(o.congestion);
}

}  // namespace ibscope::accept
