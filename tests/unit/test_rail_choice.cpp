// Each rank's UCX rail (topo/rail_choice.hpp) and the UCX variables that follow from it
// (transport/ucx/env_plan.hpp), on hand-built hosts: pure, no UCX started.

#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/rail_setup.hpp"
#include "ibscope/topo/rail_choice.hpp"
#include "ibscope/transport/ucx/endpoint.hpp"
#include "ibscope/transport/ucx/env_plan.hpp"
#include "topo_fixtures.hpp"

using namespace ibscope;
using namespace ibscope::topo;
using ibscope::measure::rail_link_problem;
using ibscope::measure::RailSetup;
using ibscope::test::dgx_like;

namespace {

Nic nic(std::string name, std::string state, int numa, bool is_virtual = false,
        std::string link_layer = "InfiniBand") {
  Nic n;
  n.name = std::move(name);
  n.numa_node = numa;
  n.is_virtual = is_virtual;
  NicPort p;
  p.state = std::move(state);
  p.link_layer = std::move(link_layer);
  n.ports.push_back(p);
  return n;
}

// A host without GPUs: two sockets, mlx5_10 (socket 1), mlx5_2 (socket 0), mlx5_3 down.
HostTopology cpu_host() {
  HostTopology h;
  h.host = "cpu01";
  h.nics = {nic("mlx5_10", "ACTIVE", 1), nic("mlx5_2", "ACTIVE", 0), nic("mlx5_3", "DOWN", 0)};
  h.nics[0].netdev = "ib1";
  h.nics[1].netdev = "ib0";
  return h;
}

HostTopology soft_roce_host() {
  HostTopology h;
  h.host = "lab1";
  h.nics = {nic("rxe0", "ACTIVE", 0, true, "Ethernet"), nic("rxe1", "ACTIVE", 0, true, "Ethernet")};
  h.nics[0].netdev = "rxe-a";
  h.nics[1].netdev = "rxe-b";
  return h;
}

}  // namespace

TEST_CASE("8-GPU/8-NIC node: local rank k uses the NIC on GPU k's switch", "[topo][rail]") {
  const HostTopology h = dgx_like();
  // GPUs by bus id are GPU 0..7, and mlx5_k sits on GPU k's PCIe switch (PIX).
  for (int k = 0; k < 8; ++k) {
    const auto rail = choose_rail(h, k, {}, /*gpu_buffers=*/true);
    REQUIRE(rail);
    CHECK(rail->nic == fmt::format("mlx5_{}", k));
    CHECK(rail->numa_node == k / 4);
    CHECK(rail->reason.find("PIX") != std::string::npos);
    const auto plan = ucx::plan_ucx_env({}, rail);
    CHECK(plan.set.at("UCX_NET_DEVICES") == fmt::format("mlx5_{}:1,ibp{}s0", k, k));
    CHECK_FALSE(plan.set.contains("UCX_TLS"));  // real InfiniBand: UCX's own transports
  }
  // 16 ranks on 8 GPUs: ranks k and k+8 share GPU k and so its NIC.
  CHECK(choose_rail(h, 11, {}, true)->nic == "mlx5_3");
}

TEST_CASE("Without GPUs the ACTIVE NICs go one per local rank in natural order", "[topo][rail]") {
  const HostTopology h = cpu_host();
  CHECK(choose_rail(h, 0, {}, true)->nic == "mlx5_2");  // before mlx5_10; mlx5_3 is DOWN
  CHECK(choose_rail(h, 1, {}, true)->nic == "mlx5_10");
  CHECK(choose_rail(h, 2, {}, true)->nic == "mlx5_2");
  CHECK(choose_rail(h, 1, {}, false)->numa_node == 1);
}

TEST_CASE("A NIC list (--nic): entry local_rank mod size, its port, and a clear error",
          "[topo][rail]") {
  const HostTopology h = cpu_host();
  const auto list = parse_nic_list("mlx5_10,mlx5_2:1");
  REQUIRE(list.size() == 2);
  CHECK(list[0] == NicRequest{"mlx5_10", 0});
  CHECK(list[1] == NicRequest{"mlx5_2", 1});
  CHECK(choose_rail(h, 0, list, true)->device_port() == "mlx5_10:1");
  CHECK(choose_rail(h, 3, list, true)->device_port() == "mlx5_2:1");
  CHECK_THROWS_WITH(choose_rail(h, 0, parse_nic_list("mlx5_7"), true),
                    Catch::Contains("cpu01 has no RDMA device of that name") &&
                        Catch::Contains("mlx5_10, mlx5_2, mlx5_3"));
  CHECK_THROWS_AS(parse_nic_list("mlx5_0,,mlx5_1"), UsageError);
  CHECK_THROWS_WITH(parse_nic_list("mlx5_0:x"), Catch::Contains("not a number"));
}

TEST_CASE("A host without an ACTIVE RDMA port has no rail and UCX keeps its defaults",
          "[topo][rail]") {
  HostTopology h;
  h.host = "laptop";
  CHECK_FALSE(choose_rail(h, 0, {}, true));
  h.nics = {nic("mlx5_0", "DOWN", 0)};
  CHECK_FALSE(choose_rail(h, 0, {}, true));
  CHECK(ucx::plan_ucx_env({}, std::nullopt).set.empty());
}

TEST_CASE("Soft-RoCE: UCX_TLS leaves ud_verbs and shared memory out unless the user set it",
          "[ucx][rail]") {
  const HostTopology h = soft_roce_host();
  const auto rail = choose_rail(h, 1, {}, true);
  REQUIRE(rail);
  CHECK(rail->soft_roce);
  CHECK(rail->nic == "rxe1");
  auto plan = ucx::plan_ucx_env({}, rail);
  CHECK(plan.set.at("UCX_TLS") == "^ud_verbs,sm");
  CHECK(plan.set.at("UCX_NET_DEVICES") == "rxe1:1,rxe-b");
  CHECK(plan.notes.size() == 2);
  CHECK(plan.warnings.empty());

  // The user's variables win; a known-bad UCX_TLS is a warning, a good one is not.
  plan = ucx::plan_ucx_env({{"UCX_TLS", "rc_verbs,ud_verbs,self"}, {"UCX_NET_DEVICES", "rxe0:1"}},
                           rail);
  CHECK(plan.set.empty());
  REQUIRE(plan.warnings.size() == 1);
  CHECK_THAT(plan.warnings[0], Catch::Contains("ud_verbs on Soft-RoCE device rxe1"));
  CHECK(ucx::plan_ucx_env({{"UCX_TLS", "rc_verbs,tcp,self"}}, rail).warnings.empty());
}

TEST_CASE("Which UCX_TLS values let ud_verbs in", "[ucx][rail]") {
  CHECK(ucx::tls_allows_ud_verbs(""));
  CHECK(ucx::tls_allows_ud_verbs("all"));
  CHECK(ucx::tls_allows_ud_verbs("rc,ud"));
  CHECK(ucx::tls_allows_ud_verbs("^sm"));
  CHECK(ucx::tls_allows_ud_verbs("ib"));
  CHECK_FALSE(ucx::tls_allows_ud_verbs("^ud_verbs"));
  CHECK_FALSE(ucx::tls_allows_ud_verbs("^ud,sm"));
  CHECK_FALSE(ucx::tls_allows_ud_verbs("rc_verbs,tcp,self"));
  CHECK_FALSE(ucx::tls_allows_ud_verbs("ud_mlx5,rc_mlx5"));
}

TEST_CASE("The RDMA devices of an endpoint's lanes", "[ucx][rail]") {
  using ucx::lane_devices;
  CHECK(lane_devices("rc_verbs/rxe0:1[rma_bw#0,am,am_bw#0] tcp/rxe-a[keepalive,wireup] | "
                     "tag_send 0..<egr/short>..72") == std::vector<std::string>{"rxe0:1"});
  CHECK(lane_devices("rc_verbs/rxe0:1[rma_bw#0] sysv/memory[am] rc_verbs/rxe1:1[rma_bw#1,"
                     "wireup{ud_verbs/rxe0:1}]") == std::vector<std::string>{"rxe0:1", "rxe1:1"});
  CHECK(lane_devices("dc_mlx5/mlx5_3:1[am] ud_mlx5/mlx5_3:1[wireup]") ==
        std::vector<std::string>{"mlx5_3:1"});
  CHECK(lane_devices("sysv/memory[am,am_bw#0,keepalive] cma/memory[rma_bw#0]").empty());
  CHECK(lane_devices("unknown").empty());
}

TEST_CASE("A rank's own link down is named from sysfs, an ACTIVE one is not", "[ucx][rail]") {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("ibscope-rail-sysfs-" + std::to_string(::getpid()));
  const std::filesystem::path port = root / "class/infiniband/mlx5_3/ports/1";
  std::filesystem::create_directories(port);
  RailSetup setup;
  setup.rail = RailChoice{};
  setup.rail->nic = "mlx5_3";
  setup.rail->port = 1;
  setup.rail->netdev = "ibp3s0";
  std::ofstream(port / "state") << "4: ACTIVE\n";
  CHECK_FALSE(rail_link_problem(setup, root.string()));
  std::ofstream(port / "state") << "1: DOWN\n";
  std::ofstream(port / "phys_state") << "3: Disabled\n";
  const auto problem = rail_link_problem(setup, root.string());
  REQUIRE(problem);
  CHECK_THAT(*problem, Catch::StartsWith("its NIC mlx5_3:1 is DOWN (physical state Disabled)") &&
                           Catch::Contains("interface ibp3s0") && Catch::Contains("ibstat mlx5_3"));
  setup.rail->nic = "mlx5_9";  // unreadable: no claim
  CHECK_FALSE(rail_link_problem(setup, root.string()));
  CHECK_FALSE(rail_link_problem(RailSetup{}, root.string()));
  std::filesystem::remove_all(root);
}
