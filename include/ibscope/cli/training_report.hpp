#pragma once
/// The training-step section of an HTML report (output/html_report.hpp): a workload's step on
/// the cluster its tiers describe — fitted from results files (`cf.fit_files`) and/or given
/// by the cluster flags — with the what-if answers. Used by `ibscope report` and `ibscope run`.

#include <vector>

#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/cli/workload_flags.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"
#include "ibscope/output/html_report.hpp"

namespace ibscope::cli {

/// `options` adds a calibration (applied before every answer) and a scaling curve.
/// Never throws for a missing or unusable tier: the section then says what is missing
/// (`missing`) and how to measure or give it. Throws UsageError for an unreadable file.
output::TrainingReport training_report(const model::Workload& w, const ClusterFlags& cf,
                                       const std::vector<model::WhatIf>& what_ifs,
                                       const TrainingOptions& options = {});

}  // namespace ibscope::cli
