// Each rank's rail on an 8-GPU/8-NIC node as discovery really reads it: an hwloc XML export
// (generated below, in the shape `lstopo --of xml` gives for such a node) through
// discover_host_topology, then choose_rail and the UCX variables per local rank. The node is
// modelled on an H100/H200 8-GPU baseboard: two sockets, four PCIe switches per socket, each with
// one GPU and one compute NIC, and a dual-port storage NIC per socket on a root port of its own.
// The compute NICs are not numbered in GPU order (the storage NICs' names fall between them),
// so natural name order would put some ranks on a storage NIC: the pairing by PCIe path must not.

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/rail_choice.hpp"
#include "ibscope/transport/ucx/env_plan.hpp"

namespace fs = std::filesystem;
using namespace ibscope;
using namespace ibscope::topo;

namespace {

// The compute NIC on GPU k's switch, and its IPoIB interface.
constexpr std::array<int, 8> kComputeNic{0, 3, 4, 5, 6, 9, 10, 11};
// Storage NICs: mlx5_1, mlx5_2 on socket 0; mlx5_7, mlx5_8 on socket 1.
constexpr std::array<std::array<int, 2>, 2> kStorageNic{{{1, 2}, {7, 8}}};

class XmlWriter {
 public:
  std::string text;
  int next_gp = 1;

  std::string gp() { return fmt::format("gp_index=\"{}\"", next_gp++); }
  static std::string sets(unsigned cpus, unsigned nodes) {
    return fmt::format(
        "cpuset=\"0x{0:08x}\" complete_cpuset=\"0x{0:08x}\" nodeset=\"0x{1:08x}\" "
        "complete_nodeset=\"0x{1:08x}\"",
        cpus, nodes);
  }
  void bridge(int depth, const std::string& range, const std::string& busid) {
    text += fmt::format(
        "<object type=\"Bridge\" {} bridge_type=\"1-1\" depth=\"{}\" bridge_pci=\"0000:[{}]\" "
        "pci_busid=\"0000:{}\" pci_type=\"0604 [1000:c030] [0000:0000] 00\" "
        "pci_link_speed=\"63.015385\">\n",
        gp(), depth, range, busid);
  }
  void gpu(const std::string& busid, int cuda) {
    text += fmt::format(
        "<object type=\"PCIDev\" {} pci_busid=\"0000:{}\" pci_type=\"0302 [10de:2335] "
        "[10de:18be] a1\" pci_link_speed=\"63.015385\">\n<object type=\"OSDev\" {} "
        "name=\"cuda{}\" osdev_type=\"5\"><info name=\"CoProcType\" value=\"CUDA\"/></object>\n"
        "</object>\n",
        gp(), busid, gp(), cuda);
  }
  void nic(const std::string& busid, int mlx5, const std::string& netdev) {
    text += fmt::format(
        "<object type=\"PCIDev\" {} pci_busid=\"0000:{}\" pci_type=\"0207 [15b3:1021] "
        "[15b3:0041] 00\" pci_link_speed=\"63.015385\">\n<object type=\"OSDev\" {} name=\"{}\" "
        "osdev_type=\"2\"/>\n<object type=\"OSDev\" {} name=\"mlx5_{}\" osdev_type=\"3\"/>\n"
        "</object>\n",
        gp(), busid, gp(), netdev, gp(), mlx5);
  }
};

std::string eight_gpu_node_xml() {
  XmlWriter w;
  w.text =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM "
      "\"hwloc2.dtd\">\n<topology version=\"2.0\">\n";
  w.text += fmt::format("<object type=\"Machine\" os_index=\"0\" {} {}>\n", XmlWriter::sets(0xf, 3),
                        w.gp());
  for (int s = 0; s < 2; ++s) {
    const unsigned cpus = 0x3u << (2 * s), node = 1u << s;
    w.text += fmt::format("<object type=\"Package\" os_index=\"{}\" {} {}>\n", s,
                          XmlWriter::sets(cpus, node), w.gp());
    w.text += fmt::format(
        "<object type=\"NUMANode\" os_index=\"{}\" {} {} local_memory=\"1099511627776\"/>\n", s,
        XmlWriter::sets(cpus, node), w.gp());
    for (int c = 0; c < 2; ++c) {
      const int pu = 2 * s + c;
      w.text += fmt::format(
          "<object type=\"Core\" os_index=\"{0}\" {1} {2}>\n<object type=\"PU\" os_index=\"{0}\" "
          "{1} {3}/>\n</object>\n",
          pu, XmlWriter::sets(1u << pu, node), w.gp(), w.gp());
    }
    const int base = s * 0x80;
    w.text += fmt::format(
        "<object type=\"Bridge\" {} bridge_type=\"0-1\" depth=\"0\" "
        "bridge_pci=\"0000:[{:02x}-{:02x}]\">\n",
        w.gp(), base, base + 0x7f);
    for (int j = 0; j < 4; ++j) {
      const int k = 4 * s + j, b = base + 0x10 * j;
      // Root port -> switch upstream port -> two downstream ports: the GPU, its NIC.
      w.bridge(1, fmt::format("{:02x}-{:02x}", b + 1, b + 0xf),
               fmt::format("{:02x}:0{}.0", base, j + 1));
      w.bridge(2, fmt::format("{:02x}-{:02x}", b + 2, b + 0xf), fmt::format("{:02x}:00.0", b + 1));
      w.bridge(3, fmt::format("{:02x}-{:02x}", b + 3, b + 3), fmt::format("{:02x}:00.0", b + 2));
      w.gpu(fmt::format("{:02x}:00.0", b + 3), k);
      w.text += "</object>\n";
      w.bridge(3, fmt::format("{:02x}-{:02x}", b + 4, b + 4), fmt::format("{:02x}:01.0", b + 2));
      w.nic(fmt::format("{:02x}:00.0", b + 4), kComputeNic[static_cast<std::size_t>(k)],
            fmt::format("ibp{}s0", kComputeNic[static_cast<std::size_t>(k)]));
      w.text += "</object>\n</object>\n</object>\n";
    }
    // The storage NIC: a dual-port card on a root port of its own, no GPU near it.
    const int sb = base + 0x50;
    w.bridge(1, fmt::format("{:02x}-{:02x}", sb, sb), fmt::format("{:02x}:07.0", base));
    for (int f = 0; f < 2; ++f) {
      const int mlx5 = kStorageNic[static_cast<std::size_t>(s)][static_cast<std::size_t>(f)];
      w.nic(fmt::format("{:02x}:00.{}", sb, f), mlx5, fmt::format("ens{}f{}np{}", sb, f, f));
    }
    w.text += "</object>\n</object>\n</object>\n";  // root port, host bridge, package
  }
  w.text += "</object>\n</topology>\n";
  return w.text;
}

// The node discovered from the XML (with an empty sysfs), every port ACTIVE, as the verbs
// layer would fill them on a healthy node.
HostTopology discovered_node() {
  std::string tmpl = (fs::temp_directory_path() / "ibscope-rail-hwloc-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const fs::path root = tmpl;
  DiscoverSource source;
  source.hwloc_xml = (root / "node.xml").string();
  std::ofstream(source.hwloc_xml) << eight_gpu_node_xml();
  source.sysfs = root / "sys";
  fs::create_directories(source.sysfs);
  HostTopology h = discover_host_topology("gpu-node-017", source);
  fs::remove_all(root);
  for (Nic& n : h.nics) {
    NicPort p;
    p.state = "ACTIVE";
    p.link_layer =
        n.name == "mlx5_1" || n.name == "mlx5_2" || n.name == "mlx5_7" || n.name == "mlx5_8"
            ? "Ethernet"
            : "InfiniBand";
    n.ports.push_back(p);
  }
  return h;
}

}  // namespace

TEST_CASE("hwloc XML of an 8-GPU/8-NIC node: local rank k gets the NIC on GPU k's switch",
          "[topo][rail][hwloc]") {
  const HostTopology h = discovered_node();
  REQUIRE(h.gpus.size() == 8);
  REQUIRE(h.nics.size() == 12);
  for (int k = 0; k < 8; ++k) {
    INFO("local rank " << k);
    const auto rail = choose_rail(h, k, {}, /*gpu_buffers=*/true);
    REQUIRE(rail);
    const int expected = kComputeNic[static_cast<std::size_t>(k)];
    CHECK(rail->nic == fmt::format("mlx5_{}", expected));
    CHECK(rail->numa_node == k / 4);
    CHECK(rail->reason.find("PIX") != std::string::npos);
    const auto plan = ucx::plan_ucx_env({}, rail);
    CHECK(plan.set.at("UCX_NET_DEVICES") == fmt::format("mlx5_{0}:1,ibp{0}s0", expected));
  }
  // Natural name order alone would have put local rank 1 on a storage NIC.
  REQUIRE(active_nics(h).size() == 12);
  CHECK(active_nics(h)[1]->name == "mlx5_1");
  // A user's UCX_NET_DEVICES wins over the pairing.
  const auto rail = choose_rail(h, 2, {}, true);
  const auto plan = ucx::plan_ucx_env({{"UCX_NET_DEVICES", "mlx5_1:1"}}, rail);
  CHECK_FALSE(plan.set.contains("UCX_NET_DEVICES"));
}
