// GPU<->NIC distance classes (nvidia-smi topo's PIX/PXB/PHB/NODE/SYS) as a pure function of two
// PCIe paths and NUMA nodes.

#include <catch2/catch.hpp>

#include "ibscope/topo/host_topology.hpp"
#include "ibscope/topo/pci_distance.hpp"

using namespace ibscope::topo;

namespace {

PciLocation at(std::string host_bridge, std::vector<std::string> bridges, int numa) {
  return {PciePath{std::move(host_bridge), std::move(bridges)}, numa};
}

// Both orders must give the same class.
PathClass both_ways(const PciLocation& a, const PciLocation& b) {
  const PathClass ab = classify(a, b);
  CHECK(classify(b, a) == ab);
  return ab;
}

const std::string kHb0 = "0000:[00-3f]";
const std::string kHb1 = "0000:[40-7f]";
const std::string kHb2 = "0000:[80-bf]";
const std::string kRootPort = "0000:00:01.0";
const std::string kSwitchUp = "0000:01:00.0";

}  // namespace

TEST_CASE("PIX: two downstream ports of one PCIe switch", "[topo][distance]") {
  const auto gpu = at(kHb0, {kRootPort, kSwitchUp, "0000:02:00.0"}, 0);
  const auto nic = at(kHb0, {kRootPort, kSwitchUp, "0000:02:01.0"}, 0);
  CHECK(both_ways(gpu, nic) == PathClass::kPix);
}

TEST_CASE("PIX: functions of one device and a device below its own bridge", "[topo][distance]") {
  const auto port0 = at(kHb0, {kRootPort, kSwitchUp, "0000:02:00.0"}, 0);
  CHECK(both_ways(port0, port0) == PathClass::kPix);
  // A device on the switch's upstream bus beside a downstream port: one bridge apart.
  const auto beside = at(kHb0, {kRootPort, kSwitchUp}, 0);
  CHECK(both_ways(beside, port0) == PathClass::kPix);
}

TEST_CASE("PXB: cascaded switches without the host bridge", "[topo][distance]") {
  const auto nic = at(kHb0, {kRootPort, kSwitchUp, "0000:02:01.0"}, 0);
  const auto gpu =
      at(kHb0, {kRootPort, kSwitchUp, "0000:02:02.0", "0000:05:00.0", "0000:06:00.0"}, 0);
  CHECK(both_ways(gpu, nic) == PathClass::kPxb);
}

TEST_CASE("PHB: different root ports of one host bridge", "[topo][distance]") {
  const auto nic = at(kHb0, {kRootPort, kSwitchUp, "0000:02:01.0"}, 0);
  const auto gpu = at(kHb0, {"0000:00:02.0"}, 0);
  CHECK(both_ways(gpu, nic) == PathClass::kPhb);
  // Devices attached straight to the host bridge (typical in virtual machines).
  CHECK(both_ways(at(kHb0, {}, 0), at(kHb0, {}, 0)) == PathClass::kPhb);
}

TEST_CASE("NODE: host bridges of the same NUMA node", "[topo][distance]") {
  const auto nic = at(kHb0, {kRootPort}, 0);
  const auto gpu = at(kHb1, {"0000:40:01.0"}, 0);
  CHECK(both_ways(gpu, nic) == PathClass::kNode);
}

TEST_CASE("SYS: across NUMA nodes", "[topo][distance]") {
  const auto nic = at(kHb0, {kRootPort}, 0);
  const auto gpu = at(kHb2, {"0000:80:01.0"}, 1);
  CHECK(both_ways(gpu, nic) == PathClass::kSys);
  // Equal bridge names under different host bridges (another PCI domain) do not count.
  CHECK(both_ways(at("0001:[00-ff]", {kRootPort}, 1), nic) == PathClass::kSys);
}

TEST_CASE("A device without a PCI location compares NUMA nodes only", "[topo][distance]") {
  const auto nic = at(kHb0, {kRootPort}, 0);
  CHECK(both_ways(at("", {}, 0), nic) == PathClass::kNode);
  CHECK(both_ways(at("", {}, 1), nic) == PathClass::kSys);
  CHECK(both_ways(at("", {}, -1), nic) == PathClass::kUnknown);
  CHECK(both_ways(at("", {}, 0), at("", {}, 0)) == PathClass::kNode);
  // Different host bridges with a node unknown on one side: unknown, not SYS.
  CHECK(both_ways(at(kHb1, {}, -1), nic) == PathClass::kUnknown);
}

TEST_CASE("Path class names round trip", "[topo][distance]") {
  for (PathClass c : {PathClass::kPix, PathClass::kPxb, PathClass::kPhb, PathClass::kNode,
                      PathClass::kSys, PathClass::kUnknown}) {
    const auto back = path_class_from_string(to_string(c));
    REQUIRE(back.has_value());
    CHECK(*back == c);
  }
  CHECK(to_string(PathClass::kPix) == "PIX");
  CHECK(to_string(PathClass::kSys) == "SYS");
  CHECK_FALSE(path_class_from_string("NV12").has_value());
}

TEST_CASE("Every GPU x NIC pair of a host is classified", "[topo][distance]") {
  HostTopology h;
  Gpu g0;
  g0.pci_bus_id = "0000:03:00.0";
  g0.pcie_path = {kHb0, {kRootPort, kSwitchUp, "0000:02:00.0"}};
  g0.numa_node = 0;
  Gpu g1 = g0;
  g1.pci_bus_id = "0000:83:00.0";
  g1.pcie_path = {kHb2, {"0000:80:01.0"}};
  g1.numa_node = 1;
  Nic n0;
  n0.name = "mlx5_0";
  n0.pcie_path = {kHb0, {kRootPort, kSwitchUp, "0000:02:01.0"}};
  n0.numa_node = 0;
  h.gpus = {g0, g1};
  h.nics = {n0};
  const auto d = compute_gpu_nic_distances(h);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == GpuNicDistance{"0000:03:00.0", "mlx5_0", PathClass::kPix});
  CHECK(d[1] == GpuNicDistance{"0000:83:00.0", "mlx5_0", PathClass::kSys});
  CHECK(find_nic(h, "mlx5_0") == &h.nics[0]);
  CHECK(find_nic(h, "mlx5_1") == nullptr);
}
