// Pure parts of the verbs layer: port speed decoding, MTU codes and negotiation, GID choice,
// device:port parsing, and the device-list errors through an injected Api.
#include <sys/resource.h>

#include <catch2/catch.hpp>

#include "ibscope/core/error.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/memory_region.hpp"
#include "ibscope/transport/verbs/queue_pair.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

using namespace ibscope;
using namespace ibscope::verbs;

TEST_CASE("link speed codes decode to lanes and rates as ibstat reports them") {
  const auto edr = decode_link_speed(32, 2);  // 4x EDR
  CHECK(edr.lanes == 4);
  CHECK(edr.speed_name == "EDR");
  CHECK(edr.line_rate_gbps == Approx(100));
  CHECK(edr.data_rate_gbps == Approx(100));
  const auto ndr = decode_link_speed(128, 2);
  CHECK(ndr.line_rate_gbps == Approx(400));
  const auto hdr2x = decode_link_speed(64, 16);
  CHECK(hdr2x.lanes == 2);
  CHECK(hdr2x.line_rate_gbps == Approx(100));
  const auto qdr = decode_link_speed(4, 2);  // 8b/10b: 40 nominal, 32 data
  CHECK(qdr.line_rate_gbps == Approx(40));
  CHECK(qdr.data_rate_gbps == Approx(32));
  const auto fdr = decode_link_speed(16, 2);  // 64b/66b
  CHECK(fdr.line_rate_gbps == Approx(56.25));
  CHECK(fdr.data_rate_gbps == Approx(54.545).epsilon(1e-3));
  const auto sdr1x = decode_link_speed(1, 1);
  CHECK(sdr1x.line_rate_gbps == Approx(2.5));
  const auto unknown = decode_link_speed(3, 2);
  CHECK(unknown.speed_name == "unknown(3)");
  CHECK(unknown.line_rate_gbps == 0);
}

TEST_CASE("MTU codes and the path MTU negotiation") {
  CHECK(mtu_code_to_bytes(1) == 256);
  CHECK(mtu_code_to_bytes(5) == 4096);
  CHECK(mtu_code_to_bytes(0) == 0);
  CHECK(mtu_code_to_bytes(6) == 0);
  CHECK(mtu_bytes_to_code(1024) == 3);
  CHECK(mtu_bytes_to_code(1500) == 0);
  CHECK(negotiate_mtu_bytes(4096, 1024, 0) == 1024);
  CHECK(negotiate_mtu_bytes(4096, 4096, 2048) == 2048);
  CHECK_THROWS_AS(negotiate_mtu_bytes(1024, 1024, 4096), UsageError);
  CHECK_THROWS_WITH(negotiate_mtu_bytes(1024, 4096, 2048),
                    Catch::Contains("above the path's active MTU 1024"));
  CHECK_THROWS_AS(negotiate_mtu_bytes(4096, 4096, 1000), UsageError);
}

namespace {
GidEntry gid(std::uint32_t index, GidType type, bool v4) {
  GidEntry g;
  g.index = index;
  g.type = type;
  if (v4) {
    g.raw[10] = 0xff;
    g.raw[11] = 0xff;
    g.raw[12] = 192;
    g.raw[15] = 1;
  } else {
    g.raw[0] = 0xfe;
    g.raw[1] = 0x80;
    g.raw[15] = 7;
  }
  return g;
}
}  // namespace

TEST_CASE("GID choice prefers IPv4-mapped RoCE v2 on Ethernet and index 0 on InfiniBand") {
  PortInfo eth;
  eth.ethernet = true;
  CHECK_FALSE(choose_gid_index(eth).has_value());
  eth.gids = {gid(0, GidType::kRoceV1, false), gid(1, GidType::kRoceV2, false),
              gid(2, GidType::kRoceV1, true), gid(3, GidType::kRoceV2, true)};
  CHECK(choose_gid_index(eth) == 3u);
  eth.gids.pop_back();
  CHECK(choose_gid_index(eth) == 1u);  // RoCE v2 link-local beats v1
  eth.gids = {gid(0, GidType::kRoceV1, false)};
  CHECK(choose_gid_index(eth) == 0u);  // only v1 left
  PortInfo ib;
  ib.gids = {gid(0, GidType::kIb, false), gid(1, GidType::kIb, false)};
  CHECK(choose_gid_index(ib) == 0u);
  CHECK(gid(3, GidType::kRoceV2, true).ipv4_mapped());
  CHECK(gid(3, GidType::kRoceV2, true).text() == "::ffff:192.0.0.1");
  CHECK_FALSE(gid(1, GidType::kRoceV2, false).ipv4_mapped());
}

TEST_CASE("device and port parsing") {
  CHECK(parse_device_port("").device.empty());
  CHECK(parse_device_port("rxe0").port == 1);
  const auto p = parse_device_port("mlx5_0:2");
  CHECK(p.device == "mlx5_0");
  CHECK(p.port == 2);
  CHECK_THROWS_AS(parse_device_port("mlx5_0:"), UsageError);
  CHECK_THROWS_AS(parse_device_port("mlx5_0:0"), UsageError);
  CHECK_THROWS_AS(parse_device_port("mlx5_0:256"), UsageError);
  CHECK_THROWS_AS(parse_device_port("mlx5_0:1x"), UsageError);
}

namespace {
// Pretends the host has two devices that libibverbs lists but that are never opened.
class TwoNamedDevices : public Api {
 public:
  ibv_device** get_device_list(int* n) override {
    *n = 2;
    return list_;
  }
  void free_device_list(ibv_device**) override { ++freed; }
  const char* get_device_name(ibv_device* d) override { return d == list_[0] ? "fake0" : "fake1"; }
  int freed = 0;

 private:
  // Distinct non-null handles; never dereferenced.
  ibv_device* list_[3] = {reinterpret_cast<ibv_device*>(0x10), reinterpret_cast<ibv_device*>(0x20),
                          nullptr};
};

class NoDevices : public Api {
 public:
  ibv_device** get_device_list(int* n) override {
    *n = 0;
    return nullptr;
  }
};
}  // namespace

TEST_CASE("opening a device that is not there names the devices that are") {
  TwoNamedDevices fake;
  ScopedApi scope(fake);
  CHECK(list_device_names() == std::vector<std::string>{"fake0", "fake1"});
  CHECK_THROWS_WITH(DeviceContext::open("mlx5_9"),
                    Catch::Contains("no RDMA device named 'mlx5_9'") &&
                        Catch::Contains("devices here: fake0, fake1"));
  CHECK(fake.freed == 2);  // the list is freed on the error path too
}

TEST_CASE("no RDMA device gives one line with the remedy") {
  NoDevices none;
  ScopedApi scope(none);
  CHECK(list_device_names().empty());
  if (kernel_device_names().empty()) {
    CHECK_THROWS_AS(DeviceContext::open(""), EnvironmentError);
    CHECK_THROWS_WITH(DeviceContext::open(""), Catch::Contains("no RDMA device on this host") &&
                                                   Catch::Contains("rdma link add rxe0 type rxe"));
  } else {
    CHECK_THROWS_WITH(DeviceContext::open(""), Catch::Contains("ibverbs-providers"));
  }
}

TEST_CASE("the api in use is restored when a test's replacement goes") {
  Api* before = &api();
  {
    NoDevices none;
    ScopedApi scope(none);
    CHECK(&api() == &none);
  }
  CHECK(&api() == before);
}

TEST_CASE("a locked-memory limit too low for a registration is named with the remedy") {
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_MEMLOCK, &saved) == 0);
  rlimit low = saved;
  low.rlim_cur = 64 * 1024;
  REQUIRE(setrlimit(RLIMIT_MEMLOCK, &low) == 0);
  const std::string remedy = memlock_remedy(1ULL << 30);
  REQUIRE(setrlimit(RLIMIT_MEMLOCK, &saved) == 0);
  CHECK_THAT(remedy,
             Catch::Contains("RLIMIT_MEMLOCK is 64 KiB") && Catch::Contains("ulimit -l unlimited"));
}

TEST_CASE("verbs errors say which call on which device and why") {
  const VerbsError e("ibv_reg_mr", "rxe0", 12, "1 GiB at 0x1000", "raise it");
  CHECK(std::string(e.what()) ==
        "ibv_reg_mr on rxe0, 1 GiB at 0x1000: Cannot allocate memory (errno 12): raise it");
  CHECK(e.kind() == ErrorKind::kSystem);
  const CompletionError c("rxe0", peer_label(1, "b"), 12, "RDMA_WRITE", 7, 0x11);
  CHECK_THAT(std::string(c.what()),
             Catch::Contains("towards peer rank 1 (host b)") &&
                 Catch::Contains("transport retry counter exceeded (status 12)") &&
                 Catch::Contains("posted RDMA_WRITE, wr_id 7, qp 0x11"));
}
