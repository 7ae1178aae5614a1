// All-to-all pattern: both exchanges simulated for every p in 1..64. Each element carries its
// (sender, index in the sender's buffer), so a block from the wrong rank, for the wrong rank, at
// the wrong place, twice or never shows up; the paired exchange runs in place through a
// one-block scratch, as the algorithms do, so a block overwritten before it was sent shows up
// too.

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ibscope/collectives/pattern/alltoall.hpp"
#include "unit/pattern_fixtures.hpp"

namespace pattern = ibscope::collectives::pattern;

using namespace ibscope::test::pattern_sim;

namespace {

using Element = std::pair<int, std::size_t>;  // (sender, index in the sender's buffer)
using Buffer = std::vector<Element>;

std::vector<Buffer> inputs(int p, std::size_t count) {
  std::vector<Buffer> in(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < count; ++i) in[r].emplace_back(r, i);
  }
  return in;
}

// What rank r must hold: block q is rank q's block r.
std::string check(const std::vector<Buffer>& out, int p, std::size_t count) {
  const std::size_t b = pattern::alltoall_block_count(count, p);
  for (int r = 0; r < p; ++r) {
    for (int q = 0; q < p; ++q) {
      const pattern::Span dst = pattern::alltoall_block(count, p, q);
      for (std::size_t i = 0; i < dst.count; ++i) {
        const Element want{q, static_cast<std::size_t>(r) * b + i};
        if (out[r][dst.offset + i] != want) {
          return "p=" + std::to_string(p) + " count=" + std::to_string(count) + " rank " +
                 std::to_string(r) + " block " + std::to_string(q) + " element " +
                 std::to_string(i);
        }
      }
    }
  }
  return {};
}

// Out of place: every round, each rank sends its block for shift_send_peer and receives the
// block of shift_recv_peer; a round must be a permutation (each rank receives what its sender
// in that round sent it).
std::string simulate_shifted(int p, std::size_t count) {
  const std::vector<Buffer> in = inputs(p, count);
  std::vector<Buffer> out(static_cast<std::size_t>(p), Buffer(count, Element{-1, 0}));
  for (int r = 0; r < p; ++r) {  // the own block is a local copy
    const pattern::Span mine = pattern::alltoall_block(count, p, r);
    for (std::size_t i = 0; i < mine.count; ++i) out[r][mine.offset + i] = in[r][mine.offset + i];
  }
  for (int k = 1; k < p; ++k) {
    for (int r = 0; r < p; ++r) {
      const int from = pattern::shift_recv_peer(r, p, k);
      if (pattern::shift_send_peer(from, p, k) != r)
        return "round " + std::to_string(k) + " unmatched";
      const pattern::Span sent = pattern::alltoall_block(count, p, r);  // from's block for r
      const pattern::Span into = pattern::alltoall_block(count, p, from);
      for (std::size_t i = 0; i < sent.count; ++i)
        out[r][into.offset + i] = in[from][sent.offset + i];
    }
  }
  return check(out, p, count);
}

// In place: each round, each rank copies the block for its peer to a scratch, sends it from
// there and receives the peer's block over it.
std::string simulate_paired(int p, std::size_t count) {
  std::vector<Buffer> buf = inputs(p, count);
  std::vector<int> own_rounds(static_cast<std::size_t>(p), 0);
  for (int k = 0; k < p; ++k) {
    std::vector<Buffer> scratch(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      const int peer = pattern::paired_peer(r, p, k);
      if (pattern::paired_peer(peer, p, k) != r) return "round " + std::to_string(k) + " unpaired";
      if (peer == r) {
        ++own_rounds[r];
        continue;
      }
      const pattern::Span blk = pattern::alltoall_block(count, p, peer);
      scratch[r].assign(buf[r].begin() + static_cast<std::ptrdiff_t>(blk.offset),
                        buf[r].begin() + static_cast<std::ptrdiff_t>(blk.offset + blk.count));
    }
    for (int r = 0; r < p; ++r) {
      const int peer = pattern::paired_peer(r, p, k);
      if (peer == r) continue;
      const pattern::Span blk = pattern::alltoall_block(count, p, peer);
      for (std::size_t i = 0; i < blk.count; ++i) buf[r][blk.offset + i] = scratch[peer][i];
    }
  }
  for (int r = 0; r < p; ++r) {
    if (own_rounds[r] != 1)
      return "rank " + std::to_string(r) + " met itself " + std::to_string(own_rounds[r]) +
             " times";
  }
  return check(buf, p, count);
}

}  // namespace

TEST_CASE("alltoall pattern: blocks of count / p, the remainder left out", "[pattern][alltoall]") {
  CHECK(pattern::alltoall_block_count(10, 3) == 3);
  CHECK(pattern::alltoall_block(10, 3, 2).offset == 6);
  CHECK(pattern::alltoall_block(10, 3, 2).count == 3);
  CHECK(pattern::alltoall_block_count(2, 3) == 0);
  CHECK(pattern::alltoall_block_count(5, 0) == 0);
}

TEST_CASE("alltoall pattern: the shifted exchange delivers every block for p = 1..64",
          "[pattern][alltoall]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (std::size_t count : counts_for(p)) {
      INFO("p " << p << " count " << count);
      REQUIRE(simulate_shifted(p, count) == "");
    }
  }
}

TEST_CASE("alltoall pattern: the paired exchange delivers every block in place for p = 1..64",
          "[pattern][alltoall]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (std::size_t count : counts_for(p)) {
      INFO("p " << p << " count " << count);
      REQUIRE(simulate_paired(p, count) == "");
    }
  }
}
