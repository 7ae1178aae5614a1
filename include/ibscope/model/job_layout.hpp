#pragma once
/// A workload preset laid out as a measured job (`ibscope run`'s network share): tensor and
/// pipeline parallel as the preset has them, data parallel over the rest of the job's ranks, the
/// job's ranks per host as GPUs per node, and the preset's micro-batches per step. Pure.

#include <span>
#include <string>

#include "ibscope/model/workload.hpp"

namespace ibscope::model {

/// `preset_name` (model::preset) laid out over a job whose rank r runs on hosts[r]. UsageError
/// when the ranks are not spread evenly over the hosts, or are not a multiple of tp x pp.
Workload lay_out_like_job(const std::string& preset_name, std::span<const std::string> hosts);

}  // namespace ibscope::model
