// Loopback judging (accept/loopback_verdict.hpp) and the PCIe route arithmetic
// (topo/pcie_route.hpp): pure, every rule and message.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ibscope/accept/loopback_verdict.hpp"
#include "ibscope/topo/pcie_route.hpp"

using ibscope::accept::judge_loopback;
using ibscope::accept::LoopbackThresholds;
using ibscope::probes::LoopbackFigures;
using ibscope::topo::PcieHop;
using ibscope::topo::PcieRoute;

namespace {

LoopbackFigures loopback_nic(std::string host, std::string nic, double write, double read) {
  LoopbackFigures f;
  f.host = std::move(host);
  f.nic = std::move(nic);
  f.virtual_nic = true;
  f.write_gbyte_s = write;
  f.read_gbyte_s = read;
  f.route.numa_node = 0;
  f.route.no_pci_reason = "virtual device " + f.nic;
  return f;
}

PcieRoute route_x16_then(int width, double gbyte_s) {
  PcieRoute r;
  r.numa_node = 0;
  r.hops = {{"0000:00:01.0", 16, 31.5}, {"0000:00:03.0", width, gbyte_s}};
  return r;
}

}  // namespace

TEST_CASE("PCIe link rates follow the encoding of each generation", "[loopback][pcie]") {
  CHECK(ibscope::topo::pcie_link_gbyte_s(2.5, 1) == Approx(0.25));  // gen 1 x1, 8b/10b
  CHECK(ibscope::topo::pcie_link_gbyte_s(5.0, 16) == Approx(8.0));  // gen 2 x16
  CHECK(ibscope::topo::pcie_link_gbyte_s(8.0, 16) == Approx(15.754).epsilon(1e-3));   // gen 3
  CHECK(ibscope::topo::pcie_link_gbyte_s(16.0, 16) == Approx(31.508).epsilon(1e-3));  // gen 4
  CHECK(ibscope::topo::pcie_link_gbyte_s(32.0, 8) == Approx(31.508).epsilon(1e-3));   // gen 5 x8
  CHECK(ibscope::topo::pcie_link_gbyte_s(0, 16) == 0);
  CHECK(ibscope::topo::pcie_link_gbyte_s(8.0, 0) == 0);
}

TEST_CASE("a PCIe route's ceiling is its narrowest known link", "[loopback][pcie]") {
  PcieRoute r = route_x16_then(1, 0.25);
  REQUIRE(ibscope::topo::narrowest_hop(r) == std::size_t{1});
  CHECK(ibscope::topo::route_gbyte_s(r) == Approx(0.25));
  CHECK(ibscope::topo::describe_route(r) ==
        "NUMA 0 → pci 0000:00:01.0 (x16, 31.50 GB/s) → pci 0000:00:03.0 (x1, 0.25 GB/s, "
        "narrowest)");
  r.hops[1].link_gbyte_s = 0;  // unknown links are skipped
  CHECK(ibscope::topo::route_gbyte_s(r) == Approx(31.5));
  CHECK(ibscope::topo::describe_route(r) ==
        "NUMA 0 → pci 0000:00:01.0 (x16, 31.50 GB/s) → pci 0000:00:03.0 (x1, ? GB/s)");
  r.hops.clear();
  CHECK_FALSE(ibscope::topo::narrowest_hop(r).has_value());
  CHECK(ibscope::topo::route_gbyte_s(r) == 0);
  r.no_pci_reason = "virtual device rxe0 on netdev rxe-a";
  r.numa_node = -1;
  CHECK(ibscope::topo::describe_route(r) ==
        "NUMA ?, no PCIe path (virtual device rxe0 on netdev rxe-a)");
}

TEST_CASE("median and percent below", "[loopback]") {
  CHECK(ibscope::accept::median_of({}) == 0);
  CHECK(ibscope::accept::median_of({3.0}) == 3.0);
  CHECK(ibscope::accept::median_of({4.0, 1.0, 2.0}) == 2.0);
  CHECK(ibscope::accept::median_of({4.0, 1.0, 2.0, 3.0}) == 2.5);
  CHECK(ibscope::accept::percent_below(0.41, 1.08) == Approx(62.04).epsilon(1e-3));
  CHECK(ibscope::accept::percent_below(2.0, 1.0) == 0);
  CHECK(ibscope::accept::percent_below(1.0, 0) == 0);
}

TEST_CASE("a NIC far below its siblings' median fails, naming its path", "[loopback]") {
  std::vector<LoopbackFigures> nics = {
      loopback_nic("h", "rxe0", 1.08, 1.0), loopback_nic("h", "rxe1", 1.10, 1.0),
      loopback_nic("h", "rxe2", 0.41, 1.0), loopback_nic("h", "rxe3", 1.00, 1.0)};
  const auto v = judge_loopback(nics, LoopbackThresholds{});
  REQUIRE(v.size() == 4);
  CHECK(v[0].pass);
  CHECK(v[1].pass);
  CHECK(v[3].pass);
  REQUIRE_FALSE(v[2].pass);
  CHECK(v[2].siblings == 3);
  CHECK(v[2].siblings_write_gbyte_s == Approx(1.08));
  REQUIRE(v[2].failures.size() == 1);  // its read is as fast as the others'
  CHECK(v[2].failures[0] ==
        "rxe2 loopback write 0.41 GB/s, 62 % below its 3 siblings' median 1.08 GB/s (fails at "
        "25 % below); path: NUMA 0, no PCIe path (virtual device rxe2)");
  // Virtual NICs are not judged against a ceiling, and say so.
  REQUIRE(v[0].notes.size() == 1);
  CHECK(v[0].notes[0].find("virtual device") != std::string::npos);
}

TEST_CASE("the sibling threshold is a flag - only the same host and memory are siblings",
          "[loopback]") {
  std::vector<LoopbackFigures> nics = {loopback_nic("a", "mlx5_0", 10, 10),
                                       loopback_nic("a", "mlx5_1", 8, 10),
                                       loopback_nic("b", "mlx5_0", 1, 1)};
  LoopbackThresholds t;
  t.slow_pct = 25;  // 8 is 20 % below 10
  auto v = judge_loopback(nics, t);
  CHECK(v[0].pass);
  CHECK(v[1].pass);
  // Host b's NIC has no sibling: judged alone, and says so.
  CHECK(v[2].pass);
  CHECK(v[2].siblings == 0);
  REQUIRE_FALSE(v[2].notes.empty());
  CHECK(v[2].notes[0] ==
        "mlx5_0 is the only NIC measured on b: judged against its port's data rate and PCIe "
        "route only");
  t.slow_pct = 10;
  v = judge_loopback(nics, t);
  CHECK_FALSE(v[1].pass);
  CHECK(v[1].siblings == 1);
  CHECK(v[1].failures.at(0).find("20 % below its 1 sibling' median 10 GB/s") != std::string::npos);
  // GPU memory is another group.
  nics[1].memory = "cuda:0";
  v = judge_loopback(nics, t);
  CHECK(v[1].pass);
  CHECK(v[1].siblings == 0);
}

TEST_CASE("a hardware NIC is judged against the smaller of its data rate and PCIe route",
          "[loopback]") {
  LoopbackFigures f = loopback_nic("h", "mlx5_0", 0.2, 0.2);
  f.virtual_nic = false;
  f.data_rate_gbyte_s = 12.5;  // 100 Gb/s
  f.route = route_x16_then(1, 0.25);
  LoopbackThresholds t;
  auto v = judge_loopback(std::span(&f, 1), t);
  REQUIRE(v.size() == 1);
  CHECK(v[0].ceiling_gbyte_s == Approx(0.25));
  CHECK(v[0].pass);  // 0.2 of 0.25 is 80 %
  f.write_gbyte_s = 0.1;
  v = judge_loopback(std::span(&f, 1), t);
  REQUIRE_FALSE(v[0].pass);
  REQUIRE(v[0].failures.size() == 1);
  CHECK(v[0].failures[0] ==
        "mlx5_0 loopback write 0.1 GB/s, 40 % of its ceiling 0.25 GB/s (fails below 50 %; the "
        "smaller of its port's data rate 12.5 GB/s and its PCIe route's 0.25 GB/s); path: NUMA "
        "0 → pci 0000:00:01.0 (x16, 31.50 GB/s) → pci 0000:00:03.0 (x1, 0.25 GB/s, narrowest)");
  // Without a PCIe rate, the port's rate is the ceiling.
  f.route.hops.clear();
  f.write_gbyte_s = 7;
  f.read_gbyte_s = 7;
  v = judge_loopback(std::span(&f, 1), t);
  CHECK(v[0].ceiling_gbyte_s == Approx(12.5));
  CHECK(v[0].pass);
}

TEST_CASE("a NIC that could not be measured fails - its siblings are judged without it",
          "[loopback]") {
  std::vector<LoopbackFigures> nics = {loopback_nic("h", "rxe0", 1, 1),
                                       loopback_nic("h", "rxe1", 1, 1)};
  nics[1].error = "port 1 is DOWN";
  nics[1].write_gbyte_s = 0;
  const auto v = judge_loopback(nics, LoopbackThresholds{});
  CHECK(v[0].pass);
  CHECK(v[0].siblings == 0);
  REQUIRE_FALSE(v[1].pass);
  CHECK(v[1].failures.at(0) == "rxe1 loopback not measured: port 1 is DOWN");
}
