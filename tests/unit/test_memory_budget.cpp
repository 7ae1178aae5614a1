// Resource limits (core/memory_budget): a command's buffers against MemAvailable,
// RLIMIT_MEMLOCK and free GPU memory, refused with the numbers and the remedy.

#include <catch2/catch.hpp>

#include "common/byte_sizes.hpp"
#include "ibscope/core/memory_budget.hpp"
#include "ibscope/core/resident_memory.hpp"
#include "ibscope/transport/ucx/endpoint.hpp"

using namespace ibscope;
using ibscope::ucx::uses_nic_registration;

using ibscope::test::kGiB;

namespace {

MemoryDemand sweep_demand(std::uint64_t per_rank, int ranks) {
  return MemoryDemand{.what = "allreduce sweep up to 8 GiB",
                      .size_flag = "-e/--maxbytes",
                      .host_bytes_per_rank = per_rank,
                      .ranks_on_host = ranks,
                      .host = "node7"};
}

}  // namespace

TEST_CASE("host memory of all ranks on a host is held against MemAvailable", "[memory_budget]") {
  const HostMemory host{.available_bytes = 20 * kGiB};
  CHECK_FALSE(memory_shortfall(sweep_demand(4 * kGiB, 4), host));    // 16 GiB of 18 usable
  const auto e = memory_shortfall(sweep_demand(6 * kGiB, 4), host);  // 24 GiB
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::kUsage);
  const std::string what = e->what();
  CHECK_THAT(what, Catch::Contains("allreduce sweep up to 8 GiB needs 24 GiB (4 ranks x 6 GiB)") &&
                       Catch::Contains("node7") && Catch::Contains("20 GiB available") &&
                       Catch::Contains("MemAvailable") && Catch::Contains("lower -e/--maxbytes") &&
                       Catch::Contains("fewer ranks per host"));
  // One rank: no "ranks x", no advice about ranks.
  const auto one = memory_shortfall(sweep_demand(19 * kGiB, 1), host);
  REQUIRE(one);
  CHECK_THAT(std::string(one->what()),
             Catch::Contains("needs 19 GiB of host memory") && !Catch::Contains("fewer ranks"));
  // The 10% headroom: 18.5 GiB of 20 is refused, 17.5 is not.
  CHECK(memory_shortfall(sweep_demand(18 * kGiB + kGiB / 2, 1), host));
  CHECK_FALSE(memory_shortfall(sweep_demand(17 * kGiB + kGiB / 2, 1), host));
}

TEST_CASE("sizes that overflow when multiplied are refused, not wrapped", "[memory_budget]") {
  CHECK(saturating_mul(UINT64_MAX / 2, 3) == UINT64_MAX);
  CHECK(saturating_mul(0, UINT64_MAX) == 0);
  CHECK(saturating_mul(3, 5) == 15);
  const HostMemory host{.available_bytes = 1000 * kGiB};
  CHECK(memory_shortfall(sweep_demand(UINT64_MAX / 2, 64), host));
}

TEST_CASE("registered memory is held against RLIMIT_MEMLOCK per process", "[memory_budget]") {
  MemoryDemand need = sweep_demand(64ULL << 20, 8);
  need.locked_bytes_per_rank = 8ULL << 20;
  const HostMemory limited{.available_bytes = 100 * kGiB, .memlock_bytes = 64ULL << 10};
  const auto e = memory_shortfall(need, limited);
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::kSystem);  // the host's setting, not the command line
  CHECK_THAT(std::string(e->what()), Catch::Contains("registers 8 MiB per rank") &&
                                         Catch::Contains("RLIMIT_MEMLOCK is 64 KiB") &&
                                         Catch::Contains("ulimit -l unlimited") &&
                                         Catch::Contains("LimitMEMLOCK"));
  // Unlimited (or CAP_IPC_LOCK): nullopt, no check; nothing registered: no check.
  CHECK_FALSE(memory_shortfall(need, HostMemory{.available_bytes = 100 * kGiB}));
  need.locked_bytes_per_rank = 0;
  CHECK_FALSE(memory_shortfall(need, limited));
  // The limit counts the queues and UCX's own registrations too.
  need.locked_bytes_per_rank = 1ULL << 20;
  CHECK(memory_shortfall(need, HostMemory{.memlock_bytes = 64ULL << 20}));
  CHECK_FALSE(memory_shortfall(need, HostMemory{.memlock_bytes = 66ULL << 20}));
}

TEST_CASE("device buffers are held against the GPU's free memory", "[memory_budget]") {
  MemoryDemand need = sweep_demand(2 * kGiB, 8);
  need.device_bytes_per_rank = 30 * kGiB;
  const auto e = memory_shortfall(need, HostMemory{.device_free_bytes = 20 * kGiB});
  REQUIRE(e);
  CHECK(e->kind() == ErrorKind::kUsage);
  CHECK_THAT(std::string(e->what()),
             Catch::Contains("30 GiB of GPU memory") && Catch::Contains("20 GiB free"));
  CHECK_FALSE(memory_shortfall(need, HostMemory{.device_free_bytes = 31 * kGiB}));
  CHECK_FALSE(memory_shortfall(need, HostMemory{}));  // unknown: not refused
}

TEST_CASE("require_memory throws the shortfall", "[memory_budget]") {
  const HostMemory host{.available_bytes = kGiB};
  CHECK_THROWS_AS(require_memory(sweep_demand(2 * kGiB, 1), host), Error);
  CHECK_NOTHROW(require_memory(sweep_demand(kGiB / 2, 1), host));
}

TEST_CASE("MemAvailable and CapEff are read from /proc texts", "[memory_budget]") {
  const std::string meminfo =
      "MemTotal:       24568316 kB\nMemFree:         1022340 kB\nMemAvailable:   20480000 kB\n";
  CHECK(parse_kib_field(meminfo, "MemAvailable:") == 20480000ULL * 1024);
  CHECK(parse_kib_field(meminfo, "MemTotal:") == 24568316ULL * 1024);
  CHECK_FALSE(parse_kib_field(meminfo, "SwapTotal:"));
  CHECK_FALSE(parse_kib_field("MemAvailable: lots kB\n", "MemAvailable:"));
  CHECK_FALSE(parse_kib_field("MemAvailable: 99999999999999999999 kB\n", "MemAvailable:"));
  const std::string root = "Name:\tx\nCapEff:\t000001ffffffffff\n";
  const std::string user = "Name:\tx\nCapEff:\t0000000000000000\n";
  const std::string no_ipc_lock = "CapEff:\t000001ffffffbfff\n";
  CHECK(has_effective_capability(root, 14));
  CHECK_FALSE(has_effective_capability(user, 14));
  CHECK_FALSE(has_effective_capability(no_ipc_lock, 14));
  CHECK(has_effective_capability(no_ipc_lock, 13));
  CHECK_FALSE(has_effective_capability("CapEff:\tzz\n", 14));
  CHECK_FALSE(has_effective_capability("Name:\tx\n", 14));
}

TEST_CASE("UCX lanes over a NIC are told from shared memory and TCP", "[memory_budget][ucx]") {
  CHECK(uses_nic_registration("rc_mlx5/mlx5_0:1[am,am_bw#0] | tag_send 0..(inf)"));
  CHECK(uses_nic_registration("sysv/memory[am] ud_verbs/rxe0:1[am]"));
  CHECK(uses_nic_registration("dc_mlx5/mlx5_2:1[rma_bw#0]"));
  CHECK_FALSE(uses_nic_registration("sysv/memory[am,am_bw#0] cma/memory[rma_bw#0]"));
  CHECK_FALSE(uses_nic_registration("tcp/eth0[am] | tag_send 0..<egr/short>..(inf)"));
  CHECK_FALSE(uses_nic_registration("tcp/src_eth0[am]"));
  CHECK_FALSE(uses_nic_registration(""));
}
