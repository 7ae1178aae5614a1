// A workload preset laid out as a measured job (model/job_layout.hpp), as `ibscope run` does for
// its network-share line.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/model/job_layout.hpp"

using namespace ibscope;

TEST_CASE("job layout: data parallel over the job's ranks, its ranks per host as GPUs per node",
          "[model]") {
  const model::Workload preset = model::preset("llama2-7b");  // tp 1, pp 1
  const std::vector<std::string> hosts{"a", "a", "b", "b"};
  const model::Workload w = model::lay_out_like_job("llama2-7b", hosts);
  CHECK(w.tp == 1);
  CHECK(w.pp == 1);
  CHECK(w.dp == 4);
  CHECK(w.gpus_per_node == 2);
  CHECK(w.microbatches() == preset.microbatches());  // the preset's micro-batches per step
  CHECK(w.global_batch == preset.microbatches() * preset.micro_batch * 4);
}

TEST_CASE("job layout: uneven hosts and too few ranks for tp x pp are usage errors", "[model]") {
  const std::vector<std::string> uneven{"a", "a", "b"};
  CHECK_THROWS_WITH(model::lay_out_like_job("llama2-7b", uneven),
                    Catch::Contains("3 ranks are not spread evenly over its 2 hosts"));
  const std::vector<std::string> four{"a", "b", "c", "d"};
  CHECK_THROWS_WITH(model::lay_out_like_job("gpt3-175b", four),
                    Catch::Contains("tp x pp = 96 ranks per model copy; the job has 4"));
  CHECK_THROWS_AS(model::lay_out_like_job("llama2-7b", std::vector<std::string>{}), UsageError);
}
