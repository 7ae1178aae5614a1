// The one reader of <sysfs>/class/infiniband and the typed port state (topo/rdma_sysfs.hpp,
// topo/port_state.hpp), on a fake sysfs tree.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "common/temp_dir.hpp"
#include "ibscope/topo/host_topology.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"

using ibscope::topo::parse_port_state;
using ibscope::topo::PortState;
using ibscope::topo::RdmaSysfs;

namespace {

void write_sysfs(const std::filesystem::path& root, const std::string& rel,
                 const std::string& text) {
  std::filesystem::create_directories((root / rel).parent_path());
  std::ofstream(root / rel) << text;
}

}  // namespace

TEST_CASE("port state: sysfs, libibverbs and ibstat spellings", "[topo][sysfs]") {
  CHECK(parse_port_state("ACTIVE") == PortState::kActive);
  CHECK(parse_port_state("4: ACTIVE") == PortState::kActive);
  CHECK(parse_port_state("active") == PortState::kActive);
  CHECK(parse_port_state("1: DOWN") == PortState::kDown);
  CHECK(parse_port_state("INIT") == PortState::kInit);
  CHECK(parse_port_state("3: ARMED") == PortState::kArmed);
  CHECK(parse_port_state("5: ACTIVE_DEFER") == PortState::kActiveDefer);
  CHECK(parse_port_state("active defer") == PortState::kActiveDefer);
  CHECK(parse_port_state("no state change (NOP)") == PortState::kNop);
  CHECK(parse_port_state("") == PortState::kUnknown);
  CHECK(parse_port_state("ACTIVE?") == PortState::kUnknown);
  CHECK(parse_port_state(std::string(64, 'A')) == PortState::kUnknown);
  for (const PortState s : {PortState::kNop, PortState::kDown, PortState::kInit, PortState::kArmed,
                            PortState::kActive, PortState::kActiveDefer}) {
    CHECK(parse_port_state(name_of(s)) == s);
  }
  ibscope::topo::NicPort port;
  port.state = "ACTIVE";
  CHECK(port.active());
  port.state = "DOWN";
  CHECK_FALSE(port.active());
  CHECK(port.port_state() == PortState::kDown);
}

TEST_CASE("rdma sysfs: devices, port attributes and netdevs of a fake tree", "[topo][sysfs]") {
  ibscope::test::TempDir dir;
  const auto& root = dir.path();
  CHECK(RdmaSysfs(root).device_names().empty());  // no class/infiniband: no RDMA core
  CHECK_FALSE(RdmaSysfs(root).has_devices());
  std::filesystem::create_directories(root / "class/infiniband");
  CHECK_FALSE(RdmaSysfs(root).has_devices());  // the class without devices

  write_sysfs(root, "class/infiniband/mlx5_1/ports/1/state", "4: ACTIVE\n");
  write_sysfs(root, "class/infiniband/mlx5_1/ports/1/phys_state", "5: LinkUp\n");
  write_sysfs(root, "class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0", "ens1f0np0\n");
  write_sysfs(root, "class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
  write_sysfs(root, "class/infiniband/mlx5_0/ports/1/phys_state", "3: Disabled\n");
  write_sysfs(root, "class/infiniband/mlx5_0/device/net/ib1/x", "");
  write_sysfs(root, "class/infiniband/mlx5_0/device/net/ib0/x", "");
  const RdmaSysfs sysfs(root);
  CHECK(sysfs.class_dir() == root / "class/infiniband");
  CHECK(sysfs.has_devices());
  CHECK(sysfs.device_names() == std::vector<std::string>{"mlx5_0", "mlx5_1"});
  CHECK(sysfs.port_state("mlx5_1", 1) == PortState::kActive);
  CHECK(sysfs.port_state("mlx5_0", 1) == PortState::kDown);
  CHECK(sysfs.port_state("mlx5_0", 2) == PortState::kUnknown);  // no such port
  CHECK(sysfs.port_attribute("mlx5_0", 1, "state") == "DOWN");
  CHECK(sysfs.phys_state("mlx5_0", 1) == "Disabled");
  CHECK(sysfs.phys_state("mlx5_9", 1).empty());
  CHECK(sysfs.netdev("mlx5_1") == "ens1f0np0");  // RoCE: GID 0's netdev
  CHECK(sysfs.netdev("mlx5_0") == "ib0");        // IPoIB: the function's first interface
  CHECK(sysfs.netdev("mlx5_9").empty());
  CHECK(sysfs.parent_device("mlx5_0") == root / "class/infiniband/mlx5_0/device");
}
