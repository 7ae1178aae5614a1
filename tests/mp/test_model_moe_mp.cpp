// `ibscope model` with a mixture-of-experts preset and a real all-to-all results file: the
// expert-parallel all-to-all term is priced from the file's all-to-all fit (or, when the run's
// times give no fit, said to be not costed with the reason), and without any all-to-all file
// it is said to be not costed, never guessed.

#include <catch2/catch.hpp>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {
ProcessResult run_moe_model(std::vector<std::string> args) {
  args.insert(args.begin(), {"model", "--preset", "mixtral-8x7b", "--inter-bw-gbps", "48",
                             "--inter-links", "8", "--intra-bw-gbps", "450"});
  return run_process({std::move(args), {}, 30});
}
}  // namespace

TEST_CASE("model: a MoE preset's EP all-to-all from a measured all-to-all file",
          "[mp][cli][model][moe]") {
  // Sizes where the time is mostly bytes, so the fit has a bandwidth on a busy host too.
  const auto a = run_process({{"alltoall", "--np", "2", "-A", "pairwise", "--sizes", "256K,1M,4M",
                               "-n", "3", "-w", "1", "--timeout", "60", "--out", make_temp_dir()},
                              {},
                              120});
  INFO(describe(a));
  REQUIRE(a.exit_code == 0);
  const std::string file = results_path(a);

  const auto r = run_moe_model({"--fit", file, "--what-if", "intra-bw=2"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# moe: 32 of 32 layers, 8 experts, top-2") != std::string::npos);
  CHECK(r.out.find("EP 8 ranks (8 per node, 1 groups per node, inside one node)") !=
        std::string::npos);
  CHECK(r.out.find("expert parallel all-to-all") != std::string::npos);
  CHECK(r.out.find("all-to-all of 536.9 MB") != std::string::npos);
  if (r.out.find("# all-to-all intra-node: none") == std::string::npos) {
    // Fitted: the term has a time and a share of the step.
    CHECK(r.out.find("fitted: pairwise all-to-all") != std::string::npos);
    CHECK(r.out.find("NOT COSTED") == std::string::npos);
  } else {
    // This host's times did not grow with size (a loaded machine): the reason is printed.
    CHECK(r.out.find("NOT COSTED") != std::string::npos);
    CHECK(r.out.find(file) != std::string::npos);
  }

  // No all-to-all rows at all: not costed, with the command that would measure it.
  const auto n = run_moe_model({});
  INFO(describe(n));
  REQUIRE(n.exit_code == 0);
  CHECK(n.out.find("NOT COSTED, left out of the step: no all-to-all fit for the intra-node "
                   "tier") != std::string::npos);
  CHECK(n.out.find("'ibscope alltoall -A pairwise' with every rank on one host") !=
        std::string::npos);
  CHECK(n.out.find("without the expert-parallel all-to-alls") != std::string::npos);
}
