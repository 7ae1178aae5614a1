// `ibscope predict` as a user meets it: tiers given on the command line give the documented
// formula's figure; tiers fitted from a real local run predict that run; bad input exits 2.

#include <catch2/catch.hpp>
#include <fstream>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {
ProcessResult run_cli(std::vector<std::string> args) {
  return run_process({std::move(args), {}, 60, ""});
}
}  // namespace

TEST_CASE("predict with given tiers prints the ring formula's time", "[mp][model]") {
  const std::string dir = make_temp_dir();
  const auto r = run_cli({"predict", "--nodes", "4", "--inter-lat-us", "10", "--inter-bw-gbps",
                          "50", "--sizes", "1G", "--json", dir + "/p.json"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  // Ring all-reduce, p = 4: 2*3*10 us + 2*3/4 * 2^30 B / 50e9 B/s = 60 us + 32212.25 us.
  std::ifstream in(dir + "/p.json");
  const auto doc = nlohmann::json::parse(in);
  CHECK(doc["rows"][0]["predicted_us"].get<double>() == Approx(60 + 32212.254720));
  CHECK(doc["rows"][0]["busbw_gbps"].get<double>() ==
        Approx(2.0 * 3 / 4 * (1 << 30) / (32272.254720e-6) / 1e9));
  // The JSON is never overwritten.
  const auto again =
      run_cli({"predict", "--nodes", "4", "--inter-bw-gbps", "50", "--json", dir + "/p.json"});
  CHECK(again.exit_code != 0);
}

TEST_CASE("predict fitted from a local run reproduces that run", "[mp][model]") {
  const std::string dir = make_temp_dir();
  const auto run = run_process({{"allreduce", "--np", "2", "-A", "ring", "-b", "4M", "-e", "64M",
                                 "-f", "4", "-n", "10", "--out", dir},
                                {},
                                120,
                                ""});
  INFO(describe(run));
  REQUIRE(run.exit_code == 0);
  const std::string file = results_path(run);
  // One host, two ranks: the intra-node tier. Shared memory on a loaded 2-core VM is noisy, so
  // this checks the plumbing (fit -> tier -> formula -> comparison), not a tolerance.
  const auto p = run_cli({"predict", "--fit", file, "--gpus-per-node", "2", "--sizes", "4M,16M,64M",
                          "--compare", file});
  INFO(describe(p));
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("intra-node tier: latency") != std::string::npos);
  CHECK(p.out.find("fitted: ring all-reduce") != std::string::npos);
  CHECK(p.out.find("compared with measurements: 3 of 3 rows") != std::string::npos);
}

TEST_CASE("predict: bad input exits 2 with a clear message", "[mp][model]") {
  const std::string dir = make_temp_dir();
  const std::string corrupt = dir + "/corrupt.json";
  std::ofstream(corrupt) << "{\"schema_version\": 1, \"tool\": ";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"predict", "--inter-bw-gbps", "10"}, "--nodes and/or --gpus-per-node"},
      {{"predict", "--nodes", "4"}, "inter-node tier has no bandwidth"},
      {{"predict", "--nodes", "4", "--inter-bw-gbps", "10", "-A", "magic"},
       "unknown algorithm 'magic'"},
      {{"predict", "--nodes", "4", "--inter-bw-gbps", "10", "-c", "alltoall"},
       "unknown collective 'alltoall'"},
      {{"predict", "--nodes", "4", "--inter-bw-gbps", "10", "--sizes", "12Q"}, "--sizes"},
      {{"predict", "--nodes", "4", "--fit", corrupt}, corrupt},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}
