// The all-to-all algorithms called directly over the in-process transport (ranks as threads),
// with guard elements around exact buffers: each rank's output holds, in block q, rank q's block
// for it; nothing is written outside the p whole blocks (the count mod p tail, the guards), and
// out of place the send buffer is never written. hier runs on buffers in the intra-host arena.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../common/rank_errors.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/transport/comm.hpp"
#include "ibscope/transport/inproc/inproc_comm.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

using namespace ibscope;
namespace inproc = ibscope::transport::inproc;

namespace {

constexpr std::size_t kGuard = 5;
constexpr std::int32_t kUntouched = -7;

std::int32_t sent(int rank, std::size_t index) {
  return static_cast<std::int32_t>(rank * 100000 + static_cast<int>(index));
}

// One rank's call: throws (never a Catch assertion: rank threads) at the first wrong element.
void run_rank(transport::Comm& comm, const collectives::CollectiveAlgorithmInfo& info,
              std::size_t count, bool in_place) {
  const int p = comm.size(), me = comm.rank();
  collectives::AlgorithmOptions options;
  std::shared_ptr<intra_host::LocalArena> arena;
  if (info.caps.needs_intra_host_arena) arena = intra_host::LocalArena::create(comm);
  options.arena = arena;
  const std::size_t total = count + 2 * kGuard;
  memory::SpaceBuffer send_buffer =
      arena ? arena->allocate(total * 4) : memory::host_space()->allocate(total * 4);
  memory::SpaceBuffer recv_buffer =
      arena ? arena->allocate(total * 4) : memory::host_space()->allocate(total * 4);
  auto* send = reinterpret_cast<std::int32_t*>(send_buffer.data());
  auto* recv = reinterpret_cast<std::int32_t*>(in_place ? send_buffer.data() : recv_buffer.data());
  for (std::size_t i = 0; i < total; ++i) {
    send[i] = i >= kGuard && i < kGuard + count ? sent(me, i - kGuard) : kUntouched;
    if (!in_place) recv[i] = kUntouched;
  }
  const auto algorithm = info.create(comm, options);
  const collectives::CollectiveArgs args{send + kGuard,    recv + kGuard,  count,
                                         DataType::kInt32, ReduceOp::kSum, 0};
  for (int call = 0; call < 2; ++call) {  // a second call on the same buffers: the scratch kept
    if (in_place && call == 1) {
      for (std::size_t i = 0; i < count; ++i) send[kGuard + i] = sent(me, i);
    }
    algorithm->run(args, Deadline(20));
    const std::size_t b = count / static_cast<std::size_t>(p);
    auto fail = [&](const char* what, std::size_t i, std::int32_t got, std::int32_t want) {
      throw std::runtime_error(fmt::format("rank {} call {}: {} element {}: {} instead of {}", me,
                                           call, what, i, got, want));
    };
    for (std::size_t i = 0; i < total; ++i) {
      const bool in_blocks = i >= kGuard && i < kGuard + b * static_cast<std::size_t>(p);
      std::int32_t want = kUntouched;
      if (in_blocks) {
        const std::size_t j = i - kGuard;
        want = sent(static_cast<int>(j / b), static_cast<std::size_t>(me) * b + j % b);
      } else if (in_place && i >= kGuard && i < kGuard + count) {
        want = sent(me, i - kGuard);  // the tail of the input stays
      }
      if (recv[i] != want) fail("output", i, recv[i], want);
      if (!in_place) {
        const std::int32_t input =
            i >= kGuard && i < kGuard + count ? sent(me, i - kGuard) : kUntouched;
        if (send[i] != input) fail("send buffer", i, send[i], input);
      }
    }
  }
  comm.close();
}

}  // namespace

TEST_CASE("alltoall algorithms write whole blocks only, in place and out of place",
          "[inproc][alltoall]") {
  for (int p : {1, 2, 3, 4, 5, 8}) {
    const int per_host = p % 2 == 0 ? 2 : 1;
    for (const auto& info : collectives::algorithms_for(Collective::kAlltoall)) {
      for (bool in_place : {false, true}) {
        // A tail of count mod p elements, and blocks of 0 (count < p) and of 1.
        for (std::size_t count : {std::size_t(p) - 1, std::size_t(p) + (p > 1 ? 1 : 0),
                                  std::size_t(37 * p + (p - 1))}) {
          INFO(info.name << " p " << p << " count " << count << (in_place ? " in place" : ""));
          const auto errors = inproc::run_ranks(
              inproc::job_shape(p, per_host, 30),
              [&](transport::Comm& comm) { run_rank(comm, info, count, in_place); });
          REQUIRE(test::first_rank_error(errors) == "");
        }
      }
    }
  }
}
