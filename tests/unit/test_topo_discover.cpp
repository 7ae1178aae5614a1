// Topology discovery from hwloc: a two-socket machine loaded from an hwloc XML export (PCIe
// switches, GPUs, InfiniBand and RoCE NICs) with a fake sysfs for software RDMA devices, and
// this host as hwloc sees it.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ibscope/core/error.hpp"
#include "ibscope/topo/discover.hpp"

namespace fs = std::filesystem;
using namespace ibscope::topo;

namespace {

// Two packages, one NUMA node each. Node 0: host bridge 0000:[00-1f] with a PCIe switch below
// root port 00:01.0 holding GPU 03:00.0 (CUDA OS device, "NVIDIA H200") and mlx5_0 (04:00.0),
// and behind a second switch GPU 07:00.0; an NVIDIA VGA function 10:00.0 on root port
// 00:02.0; an emulated VGA card (1234:1111) that is no GPU; a second host bridge with an AMD
// GPU 40:00.0. Node 1: mlx5_1 (81:00.0, netdev ens81f0) below root port 80:01.0.
const char* kTwoSocketXml = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="68719476736"/>
      <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="6">
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="7"/>
      </object>
      <object type="Bridge" gp_index="20" bridge_type="0-1" depth="0" bridge_pci="0000:[00-1f]">
        <object type="Bridge" gp_index="21" bridge_type="1-1" depth="1" bridge_pci="0000:[01-07]" pci_busid="0000:00:01.0" pci_type="0604 [8086:2030] [0000:0000] 00" pci_link_speed="15.753846">
          <object type="Bridge" gp_index="22" bridge_type="1-1" depth="2" bridge_pci="0000:[02-07]" pci_busid="0000:01:00.0" pci_type="0604 [1000:c010] [0000:0000] b0" pci_link_speed="15.753846">
            <object type="Bridge" gp_index="23" bridge_type="1-1" depth="3" bridge_pci="0000:[03-03]" pci_busid="0000:02:00.0" pci_type="0604 [1000:c010] [0000:0000] b0" pci_link_speed="31.507692">
              <object type="PCIDev" gp_index="24" pci_busid="0000:03:00.0" pci_type="0302 [10de:2335] [10de:18be] a1" pci_link_speed="31.507692">
                <object type="OSDev" gp_index="25" name="cuda0" osdev_type="5">
                  <info name="CoProcType" value="CUDA"/>
                  <info name="GPUModel" value="NVIDIA H200"/>
                </object>
              </object>
            </object>
            <object type="Bridge" gp_index="26" bridge_type="1-1" depth="3" bridge_pci="0000:[04-04]" pci_busid="0000:02:01.0" pci_type="0604 [1000:c010] [0000:0000] b0" pci_link_speed="31.507692">
              <object type="PCIDev" gp_index="27" pci_busid="0000:04:00.0" pci_type="0207 [15b3:1021] [15b3:0041] 00" pci_link_speed="31.507692">
                <object type="OSDev" gp_index="28" name="ib0" osdev_type="2"/>
                <object type="OSDev" gp_index="29" name="mlx5_0" osdev_type="3"/>
              </object>
            </object>
            <object type="Bridge" gp_index="30" bridge_type="1-1" depth="3" bridge_pci="0000:[05-07]" pci_busid="0000:02:02.0" pci_type="0604 [1000:c010] [0000:0000] b0" pci_link_speed="31.507692">
              <object type="Bridge" gp_index="31" bridge_type="1-1" depth="4" bridge_pci="0000:[06-07]" pci_busid="0000:05:00.0" pci_type="0604 [1000:c010] [0000:0000] b0" pci_link_speed="31.507692">
                <object type="Bridge" gp_index="32" bridge_type="1-1" depth="5" bridge_pci="0000:[07-07]" pci_busid="0000:06:00.0" pci_type="0604 [1000:c010] [0000:0000] b0" pci_link_speed="31.507692">
                  <object type="PCIDev" gp_index="33" pci_busid="0000:07:00.0" pci_type="0302 [10de:2335] [10de:18be] a1" pci_link_speed="31.507692">
                    <info name="PCIVendor" value="NVIDIA Corporation"/>
                    <info name="PCIDevice" value="GH100 [H200 SXM 141GB]"/>
                  </object>
                </object>
              </object>
            </object>
          </object>
        </object>
        <object type="Bridge" gp_index="34" bridge_type="1-1" depth="1" bridge_pci="0000:[10-10]" pci_busid="0000:00:02.0" pci_type="0604 [8086:2031] [0000:0000] 00" pci_link_speed="15.753846">
          <object type="PCIDev" gp_index="35" pci_busid="0000:10:00.0" pci_type="0300 [10de:20b0] [10de:1450] a1" pci_link_speed="15.753846"/>
        </object>
        <object type="PCIDev" gp_index="36" pci_busid="0000:00:0f.0" pci_type="0300 [1234:1111] [1af4:1100] 02" pci_link_speed="0.000000"/>
      </object>
      <object type="Bridge" gp_index="37" bridge_type="0-1" depth="0" bridge_pci="0000:[40-4f]">
        <object type="PCIDev" gp_index="38" pci_busid="0000:40:00.0" pci_type="0302 [1002:740c] [1002:0b0c] 01" pci_link_speed="31.507692"/>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="8">
      <object type="NUMANode" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="9" local_memory="68719476736"/>
      <object type="Core" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="10">
        <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="11"/>
      </object>
      <object type="Core" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="12">
        <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="13"/>
      </object>
      <object type="Bridge" gp_index="40" bridge_type="0-1" depth="0" bridge_pci="0000:[80-8f]">
        <object type="Bridge" gp_index="41" bridge_type="1-1" depth="1" bridge_pci="0000:[81-81]" pci_busid="0000:80:01.0" pci_type="0604 [8086:2030] [0000:0000] 00" pci_link_speed="15.753846">
          <object type="PCIDev" gp_index="42" pci_busid="0000:81:00.0" pci_type="0200 [15b3:1021] [15b3:0041] 00" pci_link_speed="31.507692">
            <object type="OSDev" gp_index="43" name="ens81f0" osdev_type="2"/>
            <object type="OSDev" gp_index="44" name="mlx5_1" osdev_type="3"/>
          </object>
        </object>
      </object>
    </object>
  </object>
</topology>
)xml";

class FakeHost {
 public:
  FakeHost() {
    std::string tmpl = (fs::temp_directory_path() / "ibscope-topo-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    root_ = tmpl;
    source_.hwloc_xml = (root_ / "topology.xml").string();
    std::ofstream(source_.hwloc_xml) << kTwoSocketXml;
    source_.sysfs = root_ / "sys";
    // rxe0 runs over ens81f0, the netdev of PCI function 81:00.0.
    write("class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0", "ens81f0\n");
    link("class/net/ens81f0/device", "devices/pci0000:80/0000:80:01.0/0000:81:00.0");
    // rxe1 runs over a veth: no PCI function anywhere.
    write("class/infiniband/rxe1/ports/1/gid_attrs/ndevs/0", "veth0\n");
    fs::create_directories(source_.sysfs / "class/net/veth0");
    // A PCI device hwloc did not report; sysfs knows its NUMA node.
    link("class/infiniband/mlx5_9/device", "devices/pci0000:a0/0000:a0:01.0/0000:a1:00.0");
    write("bus/pci/devices/0000:a1:00.0/numa_node", "1\n");
  }
  ~FakeHost() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  const DiscoverSource& source() const { return source_; }

 private:
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = source_.sysfs / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // A symlink to a directory created under the fake sysfs, as sysfs device links are.
  void link(const std::string& rel, const std::string& target_rel) {
    const fs::path target = source_.sysfs / target_rel;
    fs::create_directories(target);
    const fs::path p = source_.sysfs / rel;
    fs::create_directories(p.parent_path());
    fs::create_directory_symlink(target, p);
  }

  fs::path root_;
  DiscoverSource source_;
};

const Nic& nic(const HostTopology& h, const std::string& name) {
  const Nic* n = find_nic(h, name);
  REQUIRE(n != nullptr);
  return *n;
}

const Gpu& gpu(const HostTopology& h, const std::string& bus_id) {
  for (const auto& g : h.gpus) {
    if (g.pci_bus_id == bus_id) return g;
  }
  FAIL("no GPU " << bus_id);
  throw;
}

PathClass distance(const HostTopology& h, const std::string& gpu_bus_id, const std::string& nic) {
  for (const auto& d : h.gpu_nic) {
    if (d.gpu == gpu_bus_id && d.nic == nic) return d.path_class;
  }
  FAIL("no pair " << gpu_bus_id << " " << nic);
  throw;
}

}  // namespace

TEST_CASE("Discovery reads NUMA nodes and CPUs of a two-socket machine", "[topo][discover]") {
  const FakeHost fake;
  const HostTopology h = discover_host_topology("node01", fake.source());
  CHECK(h.host == "node01");
  CHECK(h.packages == 2);
  CHECK(h.cores == 4);
  CHECK(h.pus == 4);
  REQUIRE(h.numa_nodes.size() == 2);
  CHECK(h.numa_nodes[0] == NumaNode{0, "0-1", 2, 64ull << 30});
  CHECK(h.numa_nodes[1] == NumaNode{1, "2-3", 2, 64ull << 30});
}

TEST_CASE("Discovery places PCI NICs with path and NUMA node", "[topo][discover]") {
  const FakeHost fake;
  const HostTopology h = discover_host_topology("node01", fake.source());
  std::vector<std::string> names;
  for (const auto& n : h.nics) names.push_back(n.name);
  CHECK(names == std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_9", "rxe0", "rxe1"});
  const Nic& m0 = nic(h, "mlx5_0");
  CHECK_FALSE(m0.is_virtual);
  CHECK(m0.pci_bus_id == "0000:04:00.0");
  CHECK(m0.pcie_path == PciePath{"0000:[00-1f]", {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}});
  CHECK(m0.numa_node == 0);
  CHECK(m0.pcie_link_gbyte_s == Approx(31.507692));
  CHECK(m0.ports.empty());  // ports come from libibverbs, not from discovery
  const Nic& m1 = nic(h, "mlx5_1");
  CHECK(m1.pcie_path == PciePath{"0000:[80-8f]", {"0000:80:01.0"}});
  CHECK(m1.numa_node == 1);
  // Not in hwloc: the bus id from sysfs, the node from sysfs, no path (and a note).
  const Nic& m9 = nic(h, "mlx5_9");
  CHECK_FALSE(m9.is_virtual);
  CHECK(m9.pci_bus_id == "0000:a1:00.0");
  CHECK(m9.pcie_path.empty());
  CHECK(m9.numa_node == 1);
  REQUIRE(h.notes.size() == 1);
  CHECK_THAT(h.notes[0], Catch::Contains("mlx5_9") && Catch::Contains("0000:a1:00.0"));
}

TEST_CASE("Discovery locates software RDMA devices through their netdev", "[topo][discover]") {
  const FakeHost fake;
  const HostTopology h = discover_host_topology("node01", fake.source());
  const Nic& rxe0 = nic(h, "rxe0");
  CHECK(rxe0.is_virtual);
  CHECK(rxe0.pci_bus_id.empty());
  CHECK(rxe0.netdev == "ens81f0");
  CHECK(rxe0.pcie_via_netdev);
  CHECK(rxe0.pcie_path == PciePath{"0000:[80-8f]", {"0000:80:01.0"}});
  CHECK(rxe0.numa_node == 1);
  const Nic& rxe1 = nic(h, "rxe1");
  CHECK(rxe1.is_virtual);
  CHECK(rxe1.netdev == "veth0");
  CHECK_FALSE(rxe1.pcie_via_netdev);
  CHECK(rxe1.pcie_path.empty());
  CHECK(rxe1.numa_node == -1);  // two NUMA nodes: nothing tells which
}

TEST_CASE("Discovery finds GPUs by PCI class and names them", "[topo][discover]") {
  const FakeHost fake;
  const HostTopology h = discover_host_topology("node01", fake.source());
  std::vector<std::string> ids;
  for (const auto& g : h.gpus) ids.push_back(g.pci_bus_id);
  // Not the emulated VGA card 00:0f.0.
  CHECK(ids ==
        std::vector<std::string>{"0000:03:00.0", "0000:07:00.0", "0000:10:00.0", "0000:40:00.0"});
  const Gpu& h200 = gpu(h, "0000:03:00.0");
  CHECK(h200.name == "NVIDIA H200");
  CHECK(h200.os_devices == std::vector<std::string>{"cuda0"});
  CHECK(h200.vendor_id == 0x10de);
  CHECK(h200.device_id == 0x2335);
  CHECK(h200.numa_node == 0);
  CHECK(gpu(h, "0000:07:00.0").name == "NVIDIA Corporation GH100 [H200 SXM 141GB]");
  CHECK(gpu(h, "0000:10:00.0").name == "NVIDIA [10de:20b0]");
  CHECK(gpu(h, "0000:40:00.0").name == "AMD [1002:740c]");
  CHECK(gpu(h, "0000:40:00.0").pcie_path == PciePath{"0000:[40-4f]", {}});
}

TEST_CASE("Discovery classifies every GPU NIC pair", "[topo][discover]") {
  const FakeHost fake;
  const HostTopology h = discover_host_topology("node01", fake.source());
  CHECK(h.gpu_nic.size() == h.gpus.size() * h.nics.size());
  CHECK(distance(h, "0000:03:00.0", "mlx5_0") == PathClass::kPix);
  CHECK(distance(h, "0000:07:00.0", "mlx5_0") == PathClass::kPxb);
  CHECK(distance(h, "0000:10:00.0", "mlx5_0") == PathClass::kPhb);
  CHECK(distance(h, "0000:40:00.0", "mlx5_0") == PathClass::kNode);
  CHECK(distance(h, "0000:03:00.0", "mlx5_1") == PathClass::kSys);
  CHECK(distance(h, "0000:03:00.0", "rxe0") == PathClass::kSys);
  CHECK(distance(h, "0000:03:00.0", "mlx5_9") == PathClass::kSys);
  CHECK(distance(h, "0000:03:00.0", "rxe1") == PathClass::kUnknown);
}

TEST_CASE("The NUMA node of an RDMA device by name", "[topo][discover]") {
  const FakeHost fake;
  CHECK(numa_node_of_rdma_device("mlx5_0", fake.source()) == 0);
  CHECK(numa_node_of_rdma_device("mlx5_1", fake.source()) == 1);
  CHECK(numa_node_of_rdma_device("rxe0", fake.source()) == 1);
  CHECK(numa_node_of_rdma_device("rxe1", fake.source()) == -1);
  CHECK(numa_node_of_rdma_device("mlx5_7", fake.source()) == -1);
  DiscoverSource missing = fake.source();
  missing.hwloc_xml += ".missing";
  CHECK(numa_node_of_rdma_device("mlx5_0", missing) == -1);  // hwloc fails: unknown
  CHECK_THROWS_AS(discover_host_topology("x", missing), ibscope::SystemError);
}

TEST_CASE("GPU PCI classes", "[topo][discover]") {
  CHECK(is_gpu_pci_function(0x0302, 0x10de));
  CHECK(is_gpu_pci_function(0x0302, 0x1234));
  CHECK(is_gpu_pci_function(0x0300, 0x10de));
  CHECK(is_gpu_pci_function(0x0380, 0x1002));
  CHECK_FALSE(is_gpu_pci_function(0x0300, 0x1234));  // QEMU's emulated VGA
  CHECK_FALSE(is_gpu_pci_function(0x0200, 0x10de));  // an NVIDIA (Mellanox) NIC
}

TEST_CASE("Discovery of this host lists its NUMA nodes and CPUs", "[topo][discover]") {
  const HostTopology h = discover_host_topology("here");
  CHECK(h.pus >= 1);
  CHECK(h.cores >= 1);
  REQUIRE_FALSE(h.numa_nodes.empty());
  int pus = 0;
  for (const auto& n : h.numa_nodes) {
    CHECK_FALSE(n.cpus.empty());
    pus += n.pu_count;
  }
  CHECK(pus == h.pus);
}
