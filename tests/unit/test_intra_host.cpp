// The intra-host path's pure parts: the POSIX shared-memory segment (create, map from a second
// handle, size checks, unlink) and the hierarchical all-reduce's two-tier cost formula.

#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "ibscope/collectives/cost.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/memory/shm_segment.hpp"

using namespace ibscope;

namespace {

std::string unit_name(std::string_view what) {
  return fmt::format("/ibscope-unittest-{}-{}", ::getpid(), what);
}

bool in_dev_shm(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

}  // namespace

TEST_CASE("shm segment: a second mapping sees the first's bytes and unlink leaves the mapping",
          "[intra_host][shm]") {
  const std::string name = unit_name("share");
  auto a = memory::ShmSegment::create(name, 3 * 4096 + 5);
  REQUIRE(a.size() == 3 * 4096 + 5);
  CHECK(in_dev_shm(name));
  std::memset(a.data(), 0x5a, a.size());
  auto b = memory::ShmSegment::open(name, a.size());
  CHECK(b.data() != a.data());
  CHECK(b.data()[a.size() - 1] == std::byte{0x5a});
  a.unlink();
  CHECK_FALSE(in_dev_shm(name));
  b.data()[0] = std::byte{0x11};  // both mappings still live, and still shared
  CHECK(a.data()[0] == std::byte{0x11});
}

TEST_CASE("shm segment: errors name the segment, and the creator's name goes with it",
          "[intra_host][shm]") {
  const std::string name = unit_name("errors");
  SECTION("opening what does not exist") {
    CHECK_THROWS_WITH(memory::ShmSegment::open(name, 4096),
                      Catch::Contains(name) && Catch::Contains("No such file"));
  }
  SECTION("a size other than the creator's") {
    auto a = memory::ShmSegment::create(name, 8192);
    CHECK_THROWS_AS(memory::ShmSegment::open(name, 4096), RemoteError);
  }
  SECTION("a name that exists already") {
    auto a = memory::ShmSegment::create(name, 4096);
    CHECK_THROWS_WITH(memory::ShmSegment::create(name, 4096), Catch::Contains("File exists"));
  }
  SECTION("moved, destroyed: the name is removed once") {
    {
      auto a = memory::ShmSegment::create(name, 4096);
      memory::ShmSegment moved = std::move(a);
      CHECK(moved.name() == name);
      CHECK(a.data() == nullptr);
    }
  }
  CHECK_FALSE(in_dev_shm(name));
}

TEST_CASE("hier cost: one rank per host is the ring, one host is the shared-memory tier",
          "[intra_host][cost]") {
  const collectives::LinkCost net{5e-6, 1.0 / 12.5e9, 1.0 / 20e9};
  const collectives::LinkCost shm{0.3e-6, 1.0 / 10e9, 1.0 / 8e9};
  const double n = 64.0 * 1024 * 1024;
  CHECK(collectives::hier_allreduce_cost_s(shm, net, n, 1, 16) ==
        Approx(collectives::ring_allreduce_cost_s(net, n, 16)));
  CHECK(collectives::hier_allreduce_one_tier_cost_s(net, n, 16) ==
        Approx(collectives::ring_allreduce_cost_s(net, n, 16)));
  // 8 ranks on one host: 3 syncs, 7/8 n reduced and 7/8 n copied, nothing on the network.
  CHECK(collectives::hier_allreduce_cost_s(shm, net, n, 8, 1) ==
        Approx(3 * shm.alpha_s + 7.0 / 8 * n * (shm.gamma_s_per_byte + shm.beta_s_per_byte)));
  // 8 x 64: the network carries the ring of n/8 over 64 hosts, plus the local tier.
  CHECK(collectives::hier_allreduce_cost_s(shm, net, n, 8, 64) ==
        Approx(collectives::hier_allreduce_cost_s(shm, net, n, 8, 1) +
               collectives::ring_allreduce_cost_s(net, n / 8, 64)));
  CHECK(collectives::hier_allreduce_cost_s(shm, net, n, 1, 1) == 0);
}
