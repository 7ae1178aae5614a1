// Acceptance preflight from the topology (pure).
#include <catch2/catch.hpp>

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
  const auto p = check_preflight({host("n0", {port("ACTIVE", 4, 400)}), host("n1", {port("ACTIVE", 4, 400)})});
  CHECK(p.pass());
  CHECK(p.rdma_everywhere);
  CHECK(p.fabric_data_rate_gbit == 400);
  CHECK(p.link_layer == "InfiniBand");
  CHECK(p.active_mtu_bytes == 4096);
  CHECK(p.findings.empty());
}

TEST_CASE("preflight: a port trained below the fabric's rate fails, naming host and port") {
  const auto p = check_preflight({host("n0", {port("ACTIVE", 4, 400)}), host("n1", {port("ACTIVE", 2, 200)}),
                                  host("n2", {port("ACTIVE", 4, 400)})});
  CHECK_FALSE(p.pass());
  REQUIRE(p.findings.size() == 1);
  CHECK(p.findings[0].host == "n1");
  CHECK(p.findings[0].device == "mlx5_0:1");
  CHECK(p.findings[0].fatal);
  CHECK(p.findings[0].message.find("200 Gb/s") != std::string::npos);
}

TEST_CASE("preflight: a host whose ports are all down fails; another down port only warns") {
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

TEST_CASE("preflight: hosts without RDMA devices mean UCX; MTUs that differ warn") {
  topo::HostTopology plain;
  plain.host = "laptop";
  plain.rdma_reason = "no RDMA device";
  auto p = check_preflight({plain});
  CHECK(p.pass());
  CHECK_FALSE(p.rdma_everywhere);
  CHECK(p.no_rdma_reason == "laptop: no RDMA device");
  p = check_preflight({host("n0", {port("ACTIVE", 4, 400, 4096)}), host("n1", {port("ACTIVE", 4, 400, 2048)})});
  CHECK(p.pass());
  CHECK(p.active_mtu_bytes == 2048);
  REQUIRE(p.findings.size() == 1);
  CHECK(p.findings[0].message.find("MTUs differ") != std::string::npos);
}
