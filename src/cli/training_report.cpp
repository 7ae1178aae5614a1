#include "ibscope/cli/training_report.hpp"

#include <fmt/format.h>

#include "ibscope/cli/workload_flags.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/model/calibration.hpp"
#include "ibscope/model/scaling.hpp"
#include "ibscope/model/step_model.hpp"

namespace ibscope::cli {
namespace {

std::string tier_text(const char* name, const model::Tier& t, bool per_link) {
  if (!(t.bw_gbps > 0)) return fmt::format("{}: no figures (not measured, not given)", name);
  return fmt::format("{}: latency {:.3f} us, {:.4g} GB/s {}{}; {}", name, t.latency_s * 1e6,
                     t.bw_gbps, per_link ? "per link" : "per rank",
                     per_link ? fmt::format(", {} link(s) per node", t.links_per_node) : "",
                     t.source.empty() ? "source unknown" : t.source);
}

}  // namespace

output::TrainingReport training_report(const model::Workload& given, const ClusterFlags& cf,
                                       const std::vector<model::WhatIf>& what_ifs,
                                       const TrainingOptions& options) {
  model::Workload w = given;
  output::TrainingReport t;
  t.workload = w.source.empty() ? w.name : fmt::format("{} ({})", w.name, w.source);
  t.layout = fmt::format("tp {} x pp {} x dp {} (vp {}) = {} GPUs on {} node(s) of {}", w.tp, w.pp,
                         w.dp, w.vp, w.gpus(), w.nodes(), w.gpus_per_node);
  const model::NetworkFactory factory = [](const model::ClusterNetwork& c) {
    return model::make_network_model(c);
  };
  const auto missing = [&t](const UsageError& e) {
    t.missing = fmt::format(
        "{}. Measure the missing tier (a run with one rank per host for the inter-node tier, "
        "all ranks on one host for the intra-node tier) or give it (--inter-bw-gbps, "
        "--inter-lat-us, --intra-bw-gbps, --intra-lat-us).",
        e.what());
  };
  // A tier the files do not measure (and no flag gives) leaves the section saying so.
  model::ClusterNetwork cluster;
  try {
    cluster = chosen_cluster(cf, w);
    t.tiers.push_back(tier_text("inter-node tier", cluster.inter, true));
    t.tiers.push_back(tier_text("intra-node tier", cluster.intra, false));
    model::model_step(w, *factory(cluster));
  } catch (const UsageError& e) {
    missing(e);
    return t;
  }
  // With the tiers there, a calibration or a scale that cannot be done is the user's error
  // (exit 2), not a missing measurement.
  if (options.calibration) {
    const model::CalibrationResult r = model::calibrate(w, *factory(cluster), *options.calibration);
    w = r.workload;
    t.calibration = fmt::format(
        "Calibrated on a {} of {:.6g} s: achieved fraction of peak {:.6g} ({:.6g} s of compute "
        "per micro-batch on this layout), used for every figure below.",
        options.calibration->kind == model::Calibration::Kind::kStep ? "step"
                                                                     : "micro-batch's compute",
        options.calibration->seconds, r.achieved_fraction, r.compute_s_per_microbatch);
  }
  if (!options.scale_nodes.empty()) {
    t.scaling = model::scale_curve(w, cluster, options.scale_nodes, options.scale_batch, factory);
    t.scale_fixed_batch = options.scale_batch.empty();
  }
  try {
    const model::StepBreakdown base = model::model_step(w, *factory(cluster));
    for (const auto& q : what_ifs) t.what_ifs.push_back(model::evaluate(q, w, cluster, factory));
    t.breakdown = base;
  } catch (const UsageError& e) {
    missing(e);
    t.what_ifs.clear();
  }
  return t;
}

}  // namespace ibscope::cli
