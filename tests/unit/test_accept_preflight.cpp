// Acceptance preflight from the topology (pure).
#include <catch2/catch.hpp>

#include "ibscope/accept/links_transport.hpp"
#include "ibscope/accept/preflight.hpp"

using namespace ibscope;
using namespace ibscope::accept;

namespace {

topo::NicPort port(const char* state, int lanes, double data_rate_gbit, std::uint32_t mtu = 4096) {
  topo::NicPort p;
  p.state = state;
  p.link_layer = "InfiniBand";
  p.lanes = lanes;
  p.speed = "NDR";
  p.data_rate_gbit_s = data_rate_gbit;
  p.active_mtu_bytes = mtu;
  return p;
}

topo::HostTopology host(const std::string& name, std::vector<topo::NicPort> ports) {
  topo::HostTopology h;
  h.host = name;
  h.rdma_available = true;
  topo::Nic nic;
  nic.name = "mlx5_0";
  nic.ports = std::move(ports);
  h.nics.push_back(nic);
  return h;
}

}  // namespace

TEST_CASE("preflight: a healthy fabric passes and can run the verbs probes") {
  const auto p =
      check_preflight({host("n0", {port("ACTIVE", 4, 400)}), host("n1", {port("ACTIVE", 4, 400)})});
  CHECK(p.pass());
  CHECK(p.rdma_everywhere);
  CHECK(p.fabric_data_rate_gbit == 400);
  CHECK(p.link_layer == "InfiniBand");
  CHECK(p.active_mtu_bytes == 4096);
  CHECK(p.findings.empty());
}

TEST_CASE("preflight: a port trained below the fabric's rate fails, naming host and port") {
  const auto p =
      check_preflight({host("n0", {port("ACTIVE", 4, 400)}), host("n1", {port("ACTIVE", 2, 200)}),
                       host("n2", {port("ACTIVE", 4, 400)})});
  CHECK_FALSE(p.pass());
  REQUIRE(p.findings.size() == 1);
  CHECK(p.findings[0].host == "n1");
  CHECK(p.findings[0].device == "mlx5_0:1");
  CHECK(p.findings[0].fatal);
  CHECK(p.findings[0].message.find("200 Gb/s") != std::string::npos);
}

TEST_CASE("preflight: a host whose ports are all down fails, another down port only warns") {
  auto two_ports = host("n0", {port("ACTIVE", 4, 400), port("DOWN", 0, 0)});
  const auto p = check_preflight({two_ports, host("n1", {port("DOWN", 0, 0)})});
  CHECK_FALSE(p.pass());
  CHECK_FALSE(p.rdma_everywhere);
  CHECK(p.no_rdma_reason.find("n1") != std::string::npos);
  int fatal = 0, warnings = 0;
  for (const auto& f : p.findings) (f.fatal ? fatal : warnings)++;
  CHECK(fatal == 1);
  CHECK(warnings == 2);  // n0's port 2 and n1's port are DOWN
}

TEST_CASE("preflight: hosts without RDMA devices mean UCX, MTUs that differ warn") {
  topo::HostTopology plain;
  plain.host = "laptop";
  plain.rdma_reason = "no RDMA device";
  auto p = check_preflight({plain});
  CHECK(p.pass());
  CHECK_FALSE(p.rdma_everywhere);
  CHECK(p.no_rdma_reason == "laptop: no RDMA device");
  p = check_preflight(
      {host("n0", {port("ACTIVE", 4, 400, 4096)}), host("n1", {port("ACTIVE", 4, 400, 2048)})});
  CHECK(p.pass());
  CHECK(p.active_mtu_bytes == 2048);
  REQUIRE(p.findings.size() == 1);
  CHECK(p.findings[0].message.find("MTUs differ") != std::string::npos);
}

namespace {

// Two sockets: GPU 0000:17 and NIC mlx5_1 on socket 0, GPU 0000:97 and NIC mlx5_0 on socket 1,
// each device on its own root port.
topo::HostTopology gpu_host(const std::string& name, std::vector<int> ranks) {
  topo::HostTopology h = host(name, {port("ACTIVE", 4, 400)});
  h.ranks = std::move(ranks);
  h.nics[0].pcie_path = {"0000:[80-ff]", {"0000:80:02.0"}};
  h.nics[0].numa_node = 1;
  topo::Nic other = h.nics[0];
  other.name = "mlx5_1";
  other.pcie_path = {"0000:[00-7f]", {"0000:00:02.0"}};
  other.numa_node = 0;
  h.nics.push_back(other);
  topo::Gpu g0;
  g0.pci_bus_id = "0000:17:00.0";
  g0.pcie_path = {"0000:[00-7f]", {"0000:00:01.0"}};
  g0.numa_node = 0;
  h.gpus.push_back(g0);
  return h;
}

}  // namespace

TEST_CASE("preflight: each local rank's GPU and its distance class, SYS warns", "[accept][gpu]") {
  // Only a socket-0 GPU, and the default NIC (the first ACTIVE one) is on socket 1.
  const auto p = check_preflight({gpu_host("g0", {0, 1}), host("n1", {port("ACTIVE", 4, 400)})});
  CHECK(p.pass());              // a warning, not a failure
  REQUIRE(p.gpus.size() == 2);  // n1 has no GPU: nothing for it
  CHECK(p.gpus[0].host == "g0");
  CHECK(p.gpus[0].rank == 0);
  CHECK(p.gpus[1].rank == 1);
  CHECK(p.gpus[1].local_rank == 1);
  CHECK(p.gpus[0].choice.pci_bus_id == "0000:17:00.0");
  CHECK(p.gpus[0].choice.nic == "mlx5_0");
  CHECK(p.gpus[0].choice.to_nic == topo::PathClass::kSys);
  std::size_t sys_warnings = 0;
  for (const auto& f : p.findings) {
    if (f.message.find("SYS") == std::string::npos) continue;
    ++sys_warnings;
    CHECK_FALSE(f.fatal);
    CHECK(f.host == "g0");
    CHECK(f.device == "mlx5_0");
    CHECK_THAT(f.message, Catch::Contains("0000:17:00.0") && Catch::Contains("inter-socket"));
  }
  CHECK(sys_warnings == 2);

  // With -d mlx5_1 (same socket as the GPU) the pair is PHB: no warning.
  const auto near = check_preflight({gpu_host("g0", {0})}, {"mlx5_1"});
  REQUIRE(near.gpus.size() == 1);
  CHECK(near.gpus[0].choice.to_nic == topo::PathClass::kPhb);
  CHECK(near.gpus[0].choice.reason == "GPU 0000:17:00.0 (PHB to mlx5_1), local rank 0");
  for (const auto& f : near.findings) CHECK(f.message.find("SYS") == std::string::npos);

  // A host that lists no ranks still reports local rank 0's choice.
  const auto unranked = check_preflight({gpu_host("g0", {})});
  REQUIRE(unranked.gpus.size() == 1);
  CHECK(unranked.gpus[0].rank == -1);
}

TEST_CASE("preflight: hosts without GPUs report none", "[accept][gpu]") {
  const auto p = check_preflight({host("n0", {port("ACTIVE", 4, 400)})});
  CHECK(p.gpus.empty());
}

TEST_CASE("accept: the links' transport, auto resolved by the preflight's RDMA verdict") {
  Preflight everywhere;
  everywhere.rdma_everywhere = true;
  const Preflight nowhere;
  CHECK(links_transport(AcceptTransport::kAuto, everywhere) == AcceptTransport::kVerbs);
  CHECK(links_transport(AcceptTransport::kAuto, nowhere) == AcceptTransport::kUcx);
  CHECK(links_transport(AcceptTransport::kUcx, everywhere) == AcceptTransport::kUcx);
  CHECK(links_transport(AcceptTransport::kVerbs, nowhere) == AcceptTransport::kVerbs);
}
