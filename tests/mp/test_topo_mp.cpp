// `ibscope topo` with real ranks: one entry per host with every rank on it, NUMA nodes and CPUs,
// the results file accepted by `ibscope validate`, and "no RDMA device" (not a failure) on a
// host without one.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "results_json.hpp"

using namespace ibscope::test;

TEST_CASE("topo with two local ranks gives one host with both ranks", "[mp][topo]") {
  const std::string out = make_temp_dir();
  const auto r = run_process({{"topo", "--np", "2", "--format", "json", "--out", out}, {}, 60});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto printed = nlohmann::json::parse(r.out);  // stdout is the results document
  const auto doc = load_run_results(r);               // and the file is valid
  CHECK(printed == doc);
  CHECK(doc.at("command").at("subcommand") == "topo");
  CHECK(doc.at("job").at("ranks") == 2);
  const auto& hosts = doc.at("topology").at("hosts");
  REQUIRE(hosts.size() == 1);
  const auto& host = hosts[0];
  CHECK(host.at("host") == doc.at("job").at("hosts").at(0));
  CHECK(host.at("ranks") == nlohmann::json::array({0, 1}));
  CHECK(host.at("pus").get<int>() >= 1);
  REQUIRE_FALSE(host.at("numa_nodes").empty());
  for (const auto& node : host.at("numa_nodes")) {
    CHECK_FALSE(node.at("cpus").get<std::string>().empty());
    CHECK(node.at("memory_bytes").get<std::uint64_t>() > 0);
  }
  if (!host_has_rdma_devices()) {
    CHECK(host.at("rdma").at("available") == false);
    CHECK_THAT(host.at("rdma").at("reason").get<std::string>(), Catch::Contains("no RDMA device"));
    CHECK(host.at("nics").empty());
  }

  const auto v = run_process({{"validate", results_path(r)}, {}, 30});
  INFO(describe(v));
  CHECK(v.exit_code == 0);
}

TEST_CASE("topo prints tables by default and ports as csv", "[mp][topo]") {
  const std::string out = make_temp_dir();
  const auto t = run_process({{"topo", "--np", "2", "--out", out}, {}, 60});
  INFO(describe(t));
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.out, Catch::Contains("# ibscope topo: 2 ranks"));
  CHECK_THAT(t.out, Catch::Contains("(ranks 0,1)"));
  CHECK_THAT(t.out, Catch::Contains("memory(GiB)"));
  if (!host_has_rdma_devices()) CHECK_THAT(t.out, Catch::Contains("# RDMA: no RDMA device"));
  CHECK(t.out.find("# host ") == t.out.rfind("# host "));  // one host, printed once

  const auto c = run_process({{"topo", "--np", "1", "--format", "csv", "--out", out}, {}, 60});
  INFO(describe(c));
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.rfind("section,host,device,", 0) == 0);
  CHECK_THAT(c.out, Catch::Contains("\ntopology,"));
}
