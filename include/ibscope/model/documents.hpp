#pragma once
/// What `ibscope model --json` and `ibscope predict --json` write (docs/model.md): versioned JSON
/// documents, as text, from the typed results of the model. Pure: strings out; the commands
/// write them (never over an existing file).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/model/network.hpp"
#include "ibscope/model/scaling.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// What --calibrate was given and what it solved (the workload then carries the fraction).
struct CalibrationRecord {
  std::string kind;  ///< "step" or "microbatch"
  double seconds = 0;
  double achieved_fraction = 0;
  double compute_s_per_microbatch = 0;
};

/// {"kind": "ibscope-model", "schema_version": 1, "workload", "cluster", "breakdown",
///  "what_if", "sensitivity"}; null sensitivity on one node; then "calibration" {kind, seconds,
///  achieved_fraction, compute_s_per_microbatch} when given, and "scaling" [{nodes, gpus, tp,
///  pp, dp, vp, global_batch, breakdown, efficiency}] when not empty. Indented by 2, trailing
///  newline.
std::string model_document_text(const Workload& w, const ClusterNetwork& cluster,
                                const StepBreakdown& breakdown,
                                const std::vector<WhatIfResult>& what_ifs,
                                const std::optional<Sensitivity>& sensitivity,
                                const std::optional<CalibrationRecord>& calibration = {},
                                const std::vector<ScaleRow>& scaling = {});

/// The tiers one predicted algorithm used.
struct PredictedTiers {
  std::string algorithm;
  Tier inter, intra;
  double gamma_s_per_byte = 0;
};

/// One predicted (algorithm, size); measured_us and error_pct when --compare had the row.
struct PredictedRow {
  std::string collective, algorithm;
  std::uint64_t size_bytes = 0;
  int ranks = 0, nodes = 0;
  double predicted_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  std::optional<double> measured_us, error_pct;
};

/// {"kind": "ibscope-predict", "schema_version": 1, "fit_files", "compare_files", "nodes",
///  "gpus_per_node", "tiers", "rows"}. Indented by 2, trailing newline.
std::string predict_document_text(const std::vector<std::string>& fit_files,
                                  const std::vector<std::string>& compare_files, int nodes,
                                  int gpus_per_node, const std::vector<PredictedTiers>& tiers,
                                  const std::vector<PredictedRow>& rows);

}  // namespace ibscope::model
