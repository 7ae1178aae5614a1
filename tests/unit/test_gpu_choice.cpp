// GPU choice per local rank and the GPU<->NIC warnings (pure), on hand-built hosts.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "ibscope/core/error.hpp"
#include "ibscope/topo/gpu_choice.hpp"
#include "topo_fixtures.hpp"

using namespace ibscope;
using namespace ibscope::topo;
using ibscope::test::dgx_like;

namespace {

// Two sockets, one host bridge each; one GPU and one NIC per socket, each on its own root port.
HostTopology two_sockets() {
  HostTopology h;
  h.host = "n2s";
  Gpu g0;
  g0.pci_bus_id = "0000:17:00.0";
  g0.pcie_path = {"0000:[00-7f]", {"0000:00:01.0"}};
  g0.numa_node = 0;
  Gpu g1;
  g1.pci_bus_id = "0000:97:00.0";
  g1.pcie_path = {"0000:[80-ff]", {"0000:80:01.0"}};
  g1.numa_node = 1;
  Nic n;
  n.name = "mlx5_0";
  n.pcie_path = {"0000:[80-ff]", {"0000:80:02.0"}};
  n.numa_node = 1;
  Nic far;
  far.name = "mlx5_1";
  far.pcie_path = {"0000:[00-7f]", {"0000:00:03.0"}};
  far.numa_node = 0;
  h.gpus = {g1, g0};
  h.nics = {n, far};
  return h;
}

}  // namespace

TEST_CASE("DGX-like host: every local rank gets the GPU on its NIC's switch", "[topo][gpu]") {
  const HostTopology h = dgx_like();
  const char* gpu_bus[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                            "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (int rank = 0; rank < 8; ++rank) {
    const auto c = choose_gpu(h, rank, fmt::format("mlx5_{}", rank));
    INFO("local rank " << rank);
    CHECK(c.pci_bus_id == gpu_bus[rank]);
    CHECK(h.gpus[static_cast<std::size_t>(c.gpu_index)].pci_bus_id == c.pci_bus_id);
    CHECK(c.nic == fmt::format("mlx5_{}", rank));
    CHECK(c.to_nic == PathClass::kPix);
    CHECK(gpu_nic_warnings(c).empty());
  }
  const auto c = choose_gpu(h, 3, "mlx5_3");
  CHECK(c.reason == "GPU 0000:5d:00.0 (PIX to mlx5_3), local rank 3");
}

TEST_CASE("Ranks sharing one NIC share its closest GPUs round-robin", "[topo][gpu]") {
  HostTopology h = dgx_like();
  // Two GPUs behind mlx5_0's switch: both PIX, ordered by bus id.
  Gpu extra = h.gpus[7];  // the listing is reversed: index 7 is GPU 0 (0000:18:00.0)
  REQUIRE(extra.pci_bus_id == "0000:18:00.0");
  extra.pci_bus_id = "0000:19:00.0";
  h.gpus.push_back(extra);
  CHECK(choose_gpu(h, 0, "mlx5_0").pci_bus_id == "0000:18:00.0");
  CHECK(choose_gpu(h, 1, "mlx5_0").pci_bus_id == "0000:19:00.0");
  CHECK(choose_gpu(h, 2, "mlx5_0").pci_bus_id == "0000:18:00.0");
  CHECK(choose_gpu(h, 5, "mlx5_0").to_nic == PathClass::kPix);
}

TEST_CASE("Without a NIC (or an unknown one) GPUs go one per local rank by bus id", "[topo][gpu]") {
  const HostTopology h = dgx_like();
  CHECK(choose_gpu(h, 0, "").pci_bus_id == "0000:18:00.0");
  CHECK(choose_gpu(h, 7, "").pci_bus_id == "0000:db:00.0");
  CHECK(choose_gpu(h, 9, "").pci_bus_id == "0000:2a:00.0");  // wraps: 9 % 8 = 1
  const auto none = choose_gpu(h, 0, "");
  CHECK(none.nic.empty());
  CHECK(none.to_nic == PathClass::kUnknown);
  CHECK(gpu_nic_warnings(none).empty());
  const auto unknown = choose_gpu(h, 2, "rxe0");
  CHECK(unknown.pci_bus_id == "0000:3a:00.0");
  CHECK(unknown.nic.empty());
  CHECK(unknown.to_nic == PathClass::kUnknown);
  CHECK(unknown.reason == "GPU 0000:3a:00.0 (NIC rxe0 not in the topology), local rank 2");
}

TEST_CASE("Two sockets: the same-socket GPU wins, a cross-socket pair warns", "[topo][gpu]") {
  const HostTopology h = two_sockets();
  const auto near = choose_gpu(h, 0, "mlx5_0");
  CHECK(near.pci_bus_id == "0000:97:00.0");
  CHECK(near.to_nic == PathClass::kPhb);
  const auto soft = gpu_nic_warnings(near);
  REQUIRE(soft.size() == 1);
  CHECK_THAT(soft[0], Catch::Contains("PHB") && Catch::Contains("mlx5_0"));
  // Every rank on mlx5_1 gets the socket-0 GPU: the only PHB one.
  CHECK(choose_gpu(h, 1, "mlx5_1").pci_bus_id == "0000:17:00.0");

  // Only the far GPU left: it is chosen anyway (SYS) and warned about.
  HostTopology far_only = h;
  far_only.gpus.erase(far_only.gpus.begin());  // drop 0000:97:00.0
  const auto far = choose_gpu(far_only, 0, "mlx5_0");
  CHECK(far.pci_bus_id == "0000:17:00.0");
  CHECK(far.to_nic == PathClass::kSys);
  const auto w = gpu_nic_warnings(far);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("0000:17:00.0") && Catch::Contains("mlx5_0") &&
                       Catch::Contains("SYS") && Catch::Contains("inter-socket link") &&
                       Catch::Contains("same PCIe switch"));
}

TEST_CASE("NODE pairs get the soft note, PXB none", "[topo][gpu]") {
  GpuChoice c;
  c.pci_bus_id = "0000:17:00.0";
  c.nic = "mlx5_0";
  c.to_nic = PathClass::kNode;
  REQUIRE(gpu_nic_warnings(c).size() == 1);
  CHECK_THAT(gpu_nic_warnings(c)[0], Catch::Contains("NODE"));
  c.to_nic = PathClass::kPxb;
  CHECK(gpu_nic_warnings(c).empty());
}

TEST_CASE("A host without GPUs is a usage error that says how to check", "[topo][gpu]") {
  HostTopology h;
  h.host = "cpu01";
  CHECK_THROWS_AS(choose_gpu(h, 0, "mlx5_0"), UsageError);
  CHECK_THROWS_WITH(choose_gpu(h, 0, ""), Catch::Contains("no GPU found on cpu01 by hwloc") &&
                                              Catch::Contains("nvidia-smi") &&
                                              Catch::Contains("CUDA_VISIBLE_DEVICES"));
  CHECK_THROWS_AS(choose_gpu(two_sockets(), -1, ""), UsageError);
}
