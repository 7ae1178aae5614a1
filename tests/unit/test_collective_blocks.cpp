// Pure logic behind reduce-scatter, all-gather and broadcast: block layout, busbw factors, the
// ring rotation that leaves block r on rank r, and verification of blocks at an offset.

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/verify.hpp"
#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/core/reduce.hpp"

using namespace ibscope;

TEST_CASE("blocks: p blocks tile the vector and differ by at most one element", "[blocks]") {
  for (int p = 1; p <= 64; ++p) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(p - 1),
                              std::size_t{1009}, std::size_t{1 << 20}}) {
      std::size_t next = 0, smallest = SIZE_MAX, largest = 0;
      for (int r = 0; r < p; ++r) {
        const auto b = collectives::block_of(count, p, r);
        INFO("p " << p << " count " << count << " rank " << r);
        REQUIRE(b.offset == next);
        next += b.count;
        smallest = std::min(smallest, b.count);
        largest = std::max(largest, b.count);
      }
      CHECK(next == count);
      CHECK(largest - smallest <= 1);
    }
  }
}

TEST_CASE("busbw factors are nccl-tests'", "[blocks][busbw]") {
  CHECK(busbw_factor(Collective::kAllreduce, 1) == 0);
  CHECK(busbw_factor(Collective::kAllreduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(busbw_factor(Collective::kReduceScatter, 4) == Approx(0.75));
  CHECK(busbw_factor(Collective::kAllgather, 2) == Approx(0.5));
  CHECK(busbw_factor(Collective::kBroadcast, 16) == 1.0);
  CHECK(busbw_factor(Collective::kBroadcast, 1) == 0);
  CHECK(reduces(Collective::kReduceScatter));
  CHECK_FALSE(reduces(Collective::kAllgather));
  CHECK(name_of(Collective::kReduceScatter) == "reduce_scatter");
}

TEST_CASE(
    "every collective but all-to-all(v) has a registered ring and unknown names are usage "
    "errors",
    "[blocks][registry]") {
  for (const auto& d : collectives::descriptors()) {
    const Collective c = d.id;
    REQUIRE_FALSE(collectives::algorithms_for(c).empty());
    // All-to-all(v) has no ring: pairwise exchange first.
    const bool all_to_all = c == Collective::kAlltoall || c == Collective::kAlltoallv;
    const char* first = all_to_all ? "pairwise" : "ring";
    CHECK(collectives::algorithms_for(c).front().name == first);
    CHECK(collectives::find_algorithm(c, first).name == first);
    CHECK_THROWS_WITH(
        collectives::find_algorithm(c, "magic"),
        Catch::Contains("unknown algorithm 'magic'") && Catch::Contains(std::string(name_of(c))));
    for (const auto& a : collectives::algorithms_for(c)) {
      // The cost model is monotone in the message size and zero for one rank.
      const collectives::LinkCost link{2e-6, 1e-10, 1e-11};
      INFO(name_of(c) << " " << a.name);
      CHECK(a.cost_s(link, 1 << 20, 1) == 0);
      CHECK(a.cost_s(link, 1 << 20, 8) > 0);
      CHECK(a.cost_s(link, 1 << 24, 8) > a.cost_s(link, 1 << 20, 8));
    }
  }
}

// Symbolic ring reduce-scatter and all-gather with the rotation the standalone collectives use
// (vrank = r - 1): every rank ends with exactly its own block, fully reduced / gathered.
TEST_CASE("ring rotation: reduce-scatter leaves block r on rank r for every p in 1..64",
          "[blocks][ring]") {
  for (int p = 2; p <= 64; ++p) {
    const std::uint64_t full = p == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << p) - 1;
    // mask[r][segment]: whose contributions rank r holds for that segment.
    std::vector<std::vector<std::uint64_t>> mask(p, std::vector<std::uint64_t>(p));
    for (int r = 0; r < p; ++r) {
      for (int s = 0; s < p; ++s) mask[r][s] = std::uint64_t{1} << r;
    }
    for (int k = 0; k + 1 < p; ++k) {
      std::vector<std::uint64_t> sent(p);
      std::vector<int> sent_seg(p);
      for (int r = 0; r < p; ++r) {
        const auto st = collectives::pattern::ring_reduce_scatter_step(
            collectives::pattern::ring_prev(r, p), p, k);
        sent_seg[r] = st.send_segment;
        sent[r] = mask[r][st.send_segment];
      }
      for (int r = 0; r < p; ++r) {
        const int from = collectives::pattern::ring_prev(r, p);
        const auto st = collectives::pattern::ring_reduce_scatter_step(
            collectives::pattern::ring_prev(r, p), p, k);
        INFO("p " << p << " step " << k << " rank " << r);
        REQUIRE(st.recv_segment == sent_seg[from]);
        REQUIRE((mask[r][st.recv_segment] & sent[from]) == 0);  // nothing reduced twice
        mask[r][st.recv_segment] |= sent[from];
      }
    }
    for (int r = 0; r < p; ++r) {
      INFO("p " << p << " rank " << r);
      CHECK(mask[r][r] == full);
    }
  }
}

TEST_CASE("ring rotation: all-gather sends the own block first for every p in 1..64",
          "[blocks][ring]") {
  for (int p = 2; p <= 64; ++p) {
    std::vector<std::vector<bool>> have(p, std::vector<bool>(p, false));
    for (int r = 0; r < p; ++r) have[r][r] = true;
    for (int k = 0; k + 1 < p; ++k) {
      std::vector<int> sent_seg(p);
      for (int r = 0; r < p; ++r) {
        sent_seg[r] =
            collectives::pattern::ring_allgather_step(collectives::pattern::ring_prev(r, p), p, k)
                .send_segment;
        INFO("p " << p << " step " << k << " rank " << r);
        REQUIRE(have[r][sent_seg[r]]);  // only sends what it has
      }
      for (int r = 0; r < p; ++r) {
        const auto st =
            collectives::pattern::ring_allgather_step(collectives::pattern::ring_prev(r, p), p, k);
        INFO("p " << p << " step " << k << " rank " << r);
        REQUIRE(st.recv_segment == sent_seg[collectives::pattern::ring_prev(r, p)]);
        REQUIRE_FALSE(have[r][st.recv_segment]);  // never received twice
        have[r][st.recv_segment] = true;
      }
    }
    for (int r = 0; r < p; ++r) {
      for (int s = 0; s < p; ++s) CHECK(have[r][s]);
    }
  }
}

TEST_CASE("verify: a block at an offset checks against the right indices", "[blocks][verify]") {
  constexpr std::size_t kL = collectives::VerifiablePattern::kTableLength;
  for (DataType t : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      const collectives::VerifiablePattern pattern(t, op, 5);
      const std::size_t es = size_of(t);
      const std::size_t count = kL + 7;  // crosses one or two segment boundaries
      constexpr std::uint64_t kSeed = 11;
      INFO(name_of(t) << "/" << name_of(op));
      for (std::size_t first :
           {std::size_t{0}, std::size_t{1}, kL - 1, kL + 3, std::size_t{1000003}}) {
        INFO("first " << first);
        std::vector<std::byte> inputs(count * es);
        pattern.fill_input(2, inputs.data(), count, first, kSeed);
        CHECK(pattern.count_wrong_input(2, inputs.data(), count, first, kSeed) == 0);
        CHECK(pattern.count_wrong_input(3, inputs.data(), count, first, kSeed) > 0);
        CHECK(pattern.count_wrong_input(2, inputs.data(), count, first + 1, kSeed) > 0);
        CHECK(pattern.count_wrong_input(2, inputs.data(), count, first, kSeed + 1) > 0);
        // Rank 2's input for [first, first+count) equals the tail of a fill from 0.
        if (first < 2000) {
          std::vector<std::byte> from_zero((first + count) * es);
          pattern.fill_input(2, from_zero.data(), first + count, 0, kSeed);
          CHECK(std::memcmp(from_zero.data() + first * es, inputs.data(), count * es) == 0);
        }
        // The reduction of every rank's block at that offset is what count_wrong expects, and
        // what fill_expected writes; one element off, or another seed, is wrong.
        std::vector<std::byte> acc(count * es), other(count * es);
        pattern.fill_input(0, acc.data(), count, first, kSeed);
        for (int r = 1; r < 5; ++r) {
          pattern.fill_input(r, other.data(), count, first, kSeed);
          reduce(t, op, acc.data(), acc.data(), other.data(), count);
        }
        CHECK(pattern.count_wrong(acc.data(), count, first, kSeed) == 0);
        pattern.fill_expected(other.data(), count, first, kSeed);
        CHECK(std::memcmp(other.data(), acc.data(), count * es) == 0);
        CHECK(pattern.count_wrong(acc.data(), count, first + 1, kSeed) > 0);
        CHECK(pattern.count_wrong(acc.data(), count, first, kSeed + 1) > 0);
        // A shift by a whole segment (the table's length) is caught too.
        CHECK(pattern.count_wrong(acc.data(), count, first + kL, kSeed) > 0);
        std::vector<std::byte> poison(count * es);
        pattern.fill_poison(poison.data(), count);
        CHECK(pattern.count_wrong(poison.data(), count, first, kSeed) == count);
        CHECK(pattern.count_wrong_input(0, poison.data(), count, first, kSeed) == count);
      }
    }
  }
}
