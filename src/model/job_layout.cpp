#include "ibscope/model/job_layout.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/core/hosts.hpp"

namespace ibscope::model {

Workload lay_out_like_job(const std::string& preset_name, std::span<const std::string> hosts) {
  Workload w = preset(preset_name);
  const int ranks = static_cast<int>(hosts.size());
  const int host_count = count_hosts(hosts);
  if (ranks == 0 || ranks % host_count != 0) {
    throw UsageError(fmt::format("the job's {} ranks are not spread evenly over its {} hosts",
                                 ranks, host_count));
  }
  const int model_parallel = w.tp * w.pp;
  if (ranks % model_parallel != 0) {
    throw UsageError(fmt::format("'{}' needs tp x pp = {} ranks per model copy; the job has {}",
                                 w.name, model_parallel, ranks));
  }
  const int microbatches = w.microbatches();
  w.dp = ranks / model_parallel;
  w.gpus_per_node = ranks / host_count;
  w.global_batch = microbatches * w.micro_batch * w.dp;
  validate(w, fmt::format("preset {} laid out as this job", preset_name));
  return w;
}

}  // namespace ibscope::model
