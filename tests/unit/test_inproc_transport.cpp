// The in-process transport itself (transport/inproc/): matching, rendezvous sends, truncation,
// deadlines, the bootstrap's exchanges and a stress of many ranks and messages. Also built under
// ThreadSanitizer (tests/tsan): its ranks are threads sharing one Fabric.

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/rank_errors.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/inproc/inproc_comm.hpp"

using namespace ibscope;
namespace inproc = ibscope::transport::inproc;

namespace {

/// Catch2's assertions are not thread-safe: a rank thread throws, and the test checks on the
/// main thread that no rank did.
void expect(bool ok, const std::string& what) {
  if (!ok) throw std::logic_error("expected: " + what);
}

template <typename F>
void expect_remote_error(F&& f, const std::string& what) {
  try {
    f();
  } catch (const RemoteError&) {
    return;
  }
  throw std::logic_error("expected a RemoteError: " + what);
}

}  // namespace

TEST_CASE("in-process transport: matching by source and tag, rendezvous sends, truncation",
          "[inproc]") {
  const auto errors = inproc::run_ranks(inproc::job_shape(3), [](transport::Comm& comm) {
    const Deadline deadline(10);
    if (comm.rank() == 0) {
      comm.bootstrap().barrier("rank 2 sent");
      // Two messages with one tag from rank 1 arrive in order; rank 2's with the same tag
      // matches only a receive from rank 2.
      int a = 0, b = 0, c = 0;
      std::vector<transport::Request> reqs;
      reqs.push_back(comm.irecv(2, transport::make_tag(2, 0, 0, 0), &c, sizeof c));
      reqs.push_back(comm.irecv(1, transport::make_tag(1, 0, 0, 0), &a, sizeof a));
      reqs.push_back(comm.irecv(1, transport::make_tag(1, 0, 0, 0), &b, sizeof b));
      comm.wait_all(reqs, "receive", deadline);
      expect(a == 11 && b == 12 && c == 21, fmt::format("11 12 21, got {} {} {}", a, b, c));
      // A message longer than the receive's buffer fails the receive.
      char small = 0;
      auto truncated = comm.irecv(1, transport::make_tag(1, 1, 0, 0), &small, 1);
      expect_remote_error([&] { comm.wait(truncated, "truncated", deadline); }, "truncation");
    } else if (comm.rank() == 1) {
      comm.bootstrap().barrier("rank 2 sent");
      const int x = 11, y = 12;
      auto s1 = comm.isend(0, transport::make_tag(1, 0, 0, 0), &x, sizeof x);
      auto s2 = comm.isend(0, transport::make_tag(1, 0, 0, 0), &y, sizeof y);
      comm.wait(s1, "send", deadline);
      comm.wait(s2, "send", deadline);
      const double big = 1;
      auto s3 = comm.isend(0, transport::make_tag(1, 1, 0, 0), &big, sizeof big);
      expect_remote_error([&] { comm.wait(s3, "truncated", deadline); }, "truncation");
    } else {
      const int z = 21;
      // Rendezvous: no receive is posted yet (rank 0 waits at the barrier), so the send is not
      // complete however long it waits.
      auto s = comm.isend(0, transport::make_tag(2, 0, 0, 0), &z, sizeof z);
      for (int i = 0; i < 100; ++i) comm.progress();
      expect(!s.test(), "a send without a receive stays pending");
      comm.bootstrap().barrier("rank 2 sent");
      comm.wait(s, "send", deadline);
    }
    comm.close();
  });
  CHECK(test::first_rank_error(errors) == "");
}

TEST_CASE("in-process transport: a wait names the rank it waited for at its deadline", "[inproc]") {
  const auto errors = inproc::run_ranks(inproc::job_shape(2, 1, 5), [](transport::Comm& comm) {
    if (comm.rank() == 1) {
      int never = 0;
      auto r = comm.irecv(0, transport::make_tag(0, 0, 0, 0), &never, sizeof never);
      comm.wait(r, "waiting for nothing", Deadline(0.3));
    }
  });
  REQUIRE(errors[1]);
  try {
    std::rethrow_exception(errors[1]);
  } catch (const TimeoutError& e) {
    CHECK_THAT(e.what(), Catch::Contains("waiting for nothing") &&
                             Catch::Contains("rank 1 (inproc-host1)") &&
                             Catch::Contains("rank 0 (inproc-host0)"));
  }
}

TEST_CASE("in-process transport: 16 ranks exchange rings of messages and bootstrap rounds",
          "[inproc]") {
  constexpr int kRanks = 16;
  constexpr int kRounds = 50;
  const auto errors = inproc::run_ranks(inproc::job_shape(kRanks, 4), [](transport::Comm& comm) {
    const Deadline deadline(30);
    const int next = (comm.rank() + 1) % comm.size();
    const int prev = (comm.rank() + comm.size() - 1) % comm.size();
    std::vector<int> out(64), in(64);
    for (int round = 0; round < kRounds; ++round) {
      const std::uint32_t seq = comm.next_op_seq();
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = comm.rank() * 1000 + round + static_cast<int>(i);
      std::vector<transport::Request> reqs;
      reqs.push_back(comm.irecv(prev, transport::make_tag(prev, seq, 0, 0), in.data(),
                                in.size() * sizeof(int)));
      reqs.push_back(comm.isend(next, transport::make_tag(comm.rank(), seq, 0, 0), out.data(),
                                out.size() * sizeof(int)));
      comm.wait_all(reqs, "ring round", deadline);
      for (std::size_t i = 0; i < in.size(); ++i) {
        expect(in[i] == prev * 1000 + round + static_cast<int>(i),
               fmt::format("round {} element {} from rank {}", round, i, prev));
      }
      if (round % 10 == 0) {
        const std::byte mine{static_cast<unsigned char>(comm.rank())};
        const auto all = comm.bootstrap().allgather(std::span(&mine, 1), "stress allgather");
        expect(all.size() == static_cast<std::size_t>(comm.size()), "one blob per rank");
        for (int r = 0; r < comm.size(); ++r) {
          expect(all[static_cast<std::size_t>(r)].at(0) == std::byte(static_cast<unsigned char>(r)),
                 fmt::format("rank {}'s blob", r));
        }
      }
    }
    expect(comm.bootstrap().local_size() == 4, "4 ranks per host");
    expect(comm.bootstrap().host(comm.rank()) == fmt::format("inproc-host{}", comm.rank() / 4),
           "block placement");
    comm.close();
  });
  CHECK(test::first_rank_error(errors) == "");
}

TEST_CASE("in-process transport: a rank that fails ends the others' exchanges naming it",
          "[inproc]") {
  const auto errors = inproc::run_ranks(inproc::job_shape(4, 2, 20), [](transport::Comm& comm) {
    if (comm.rank() == 3) throw std::runtime_error("injected");
    comm.bootstrap().barrier("never complete");
  });
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r);
    REQUIRE(errors[static_cast<std::size_t>(r)]);
    try {
      std::rethrow_exception(errors[static_cast<std::size_t>(r)]);
    } catch (const RemoteError& e) {
      CHECK_THAT(e.what(), Catch::Contains("never complete") &&
                               Catch::Contains("rank 3 (inproc-host1) failed: injected"));
    }
  }
}
