// `ibscope probe` with real ranks on a host without RDMA devices (the real-device runs are in
// tests/rxe): the missing device is one clear line per rank and a partial results file that
// validates; bad flags are usage errors before any rank starts and write nothing.

#include <catch2/catch.hpp>
#include <filesystem>

#include "results_json.hpp"
#include "run_files.hpp"

using namespace ibscope::test;

TEST_CASE("probe on a host without RDMA says so with the remedy", "[mp][probe]") {
  if (host_has_rdma_devices()) {
    WARN("this host has RDMA devices: the no-device path is not reachable here");
    return;
  }
  const std::string out = make_temp_dir();
  const auto r = run_process({{"probe", "write_bw", "--np", "2", "--out", out}, {}, 60});
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("no RDMA device on this host") &&
                        Catch::Contains("rdma link add rxe0 type rxe netdev"));
  const auto doc = load_run_results(r);  // the partial file validates
  CHECK(doc.at("complete") == false);
  CHECK(doc.at("error").at("kind") == "system");
  CHECK(doc.at("probes").at("params").at("test") == "write_bw");
  CHECK(doc.at("probes").at("rows").empty());
}

TEST_CASE("probe usage errors stop before any rank starts", "[mp][probe]") {
  const std::string out = make_temp_dir();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"probe", "write_bw", "-s", "4K", "-a"}, "give one of -s/--size, -a/--all"},
      {{"probe", "atomic_bw"}, "unknown probe 'atomic_bw'"},
      {{"probe", "read_lat", "-B"}, "bandwidth tests, not read_lat"},
      {{"probe", "send_lat", "-q", "2"}, "-q/--qp must be 1"},
      {{"probe", "write_bw", "-d", "mlx5_0:0"}, "PORT 1..255"},
      {{"probe", "write_bw", "--pairs", "0:0"}, "paired with itself"},
      {{"probe", "write_bw", "-s", "3G"}, "2 GiB"},
      {{"probe", "write_lat", "-m", "1500"}, "-m"},
  };
  for (const auto& [args, message] : cases) {
    auto full = args;
    full.insert(full.end(), {"--np", "2", "--out", out});
    const auto r = run_process({full, {}, 60});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
  CHECK(files_in(out).empty());
}
