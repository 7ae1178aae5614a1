// Verification catches data in the wrong place: every collective is simulated on host through
// the real call layouts (prepare_call, count_wrong_call), its correct result is checked, then
// each misplacement fault (misplace.hpp) is applied to the result with the block and chunk
// geometry of the algorithms, and #wrong must be non-zero every time. All-to-all's blocks each
// come from another rank, so a block moved, swapped, duplicated or dropped holds the wrong
// sender's data.

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/call_layout.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/collectives/harness/misplace.hpp"
#include "ibscope/collectives/harness/verify.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/reduce.hpp"

using namespace ibscope;
using Bytes = std::vector<std::byte>;

namespace {

constexpr Collective kCollectives[] = {Collective::kAllreduce, Collective::kReduceScatter,
                                       Collective::kAllgather, Collective::kBroadcast,
                                       Collective::kAlltoall};
constexpr std::size_t kChunkElems[] = {4, 16, 64};

// One simulated out-of-place call on p ranks: every rank's buffers and layout.
class SimulatedCall {
 public:
  SimulatedCall(Collective c, int p, DataType t, ReduceOp op, std::size_t count,
                const collectives::VerifiablePattern& pattern, std::uint64_t seed)
      : c_(c), p_(p), es_(size_of(t)), count_(count), pattern_(pattern), seed_(seed) {
    const int root = p - 1;
    for (int r = 0; r < p; ++r) {
      send_.emplace_back(count * es_);
      recv_.emplace_back(count * es_);
    }
    for (int r = 0; r < p; ++r) {
      layouts_.push_back(collectives::make_call_layout(c, r, p, false, send_[r].data(),
                                                       recv_[r].data(), count, t, op, root));
      collectives::prepare_call(c, r, pattern, layouts_.back(), false, seed);
    }
    // The correct result, gathered: the reduction, the concatenated blocks, or the root's vector.
    correct_.resize(count * es_);
    switch (c) {
      case Collective::kAllreduce:
      case Collective::kReduceScatter:
        std::memcpy(correct_.data(), layouts_[0].input, count * es_);
        for (int r = 1; r < p; ++r) {
          reduce(t, op, correct_.data(), correct_.data(), layouts_[r].input, count);
        }
        break;
      case Collective::kAllgather:
        for (int r = 0; r < p; ++r) {
          const auto& l = layouts_[r];
          std::memcpy(correct_.data() + l.input_first * es_, l.input, l.input_count * es_);
        }
        break;
      case Collective::kBroadcast:
        std::memcpy(correct_.data(), layouts_[root].input, count * es_);
        break;
      case Collective::kAlltoall:
        // Each rank's own: block q is rank q's block for it (correct_ stays unused).
        for (int r = 0; r < p; ++r) {
          const collectives::CallLayout& l = layouts_[r];
          const std::size_t b = l.output_count / static_cast<std::size_t>(p);
          Bytes& mine = exchanged_.emplace_back(count * es_);
          for (int q = 0; q < p; ++q) {
            std::memcpy(mine.data() + q * b * es_, layouts_[q].input + l.output_first * es_,
                        b * es_);
          }
        }
        break;
      case Collective::kAlltoallv:  // needs counts: tests/unit/test_inproc_alltoallv.cpp
        break;
    }
  }

  /// The correct result as rank `victim` sees it gathered: the full vector (reduce-scatter: the
  /// blocks of all ranks), or all-to-all's result on that rank.
  const Bytes& correct(int victim) const {
    return c_ == Collective::kAlltoall ? exchanged_[victim] : correct_;
  }

  // Delivers `gathered` (what the correct result would be) to the ranks and returns #wrong
  // summed over ranks. Reduce-scatter scatters its blocks; the others give every rank the
  // correct result except rank `victim`, which gets `gathered`.
  std::size_t deliver_and_count(const Bytes& gathered, int victim) {
    for (int r = 0; r < p_; ++r) {
      const collectives::CallLayout& l = layouts_[r];
      const Bytes& from = c_ == Collective::kReduceScatter || r == victim ? gathered : correct(r);
      // All-to-all's output_first is where its blocks sat in their senders' vectors.
      const std::size_t at = c_ == Collective::kAlltoall ? 0 : l.output_first;
      std::memcpy(l.output, from.data() + at * es_, l.output_count * es_);
    }
    std::size_t wrong = 0;
    for (int r = 0; r < p_; ++r)
      wrong += collectives::count_wrong_call(c_, p_, pattern_, layouts_[r], seed_);
    return wrong;
  }

 private:
  Collective c_;
  int p_;
  std::size_t es_, count_;
  const collectives::VerifiablePattern& pattern_;
  std::uint64_t seed_;
  std::vector<Bytes> send_, recv_;
  std::vector<collectives::CallLayout> layouts_;
  Bytes correct_;
  std::vector<Bytes> exchanged_;  // all-to-all: each rank's correct result
};

struct Injection {
  collectives::misplace::Fault fault;
  int block;
  std::size_t chunk;
  std::size_t chunk_elems;
};

// Every fault at the first, a middle and the last block; the chunk faults also at the first and
// second chunk of each chunk size.
std::vector<Injection> injections(int p) {
  std::vector<Injection> all;
  for (collectives::misplace::Fault f : collectives::misplace::kAllFaults) {
    const bool chunked = f == collectives::misplace::Fault::kPermuteChunk ||
                         f == collectives::misplace::Fault::kDropChunk;
    for (int block : {0, p / 2, p - 1}) {
      if (!chunked) {
        all.push_back({f, block, 0, 1});
        continue;
      }
      for (std::size_t ce : kChunkElems) {
        for (std::size_t chunk : {std::size_t{0}, std::size_t{1}})
          all.push_back({f, block, chunk, ce});
      }
    }
  }
  return all;
}

}  // namespace

TEST_CASE("misplace: fault names parse back and unknown names do not", "[verify][misplace]") {
  for (collectives::misplace::Fault f : collectives::misplace::kAllFaults) {
    CHECK(collectives::misplace::fault_named(collectives::misplace::name_of(f)) == f);
  }
  CHECK(collectives::misplace::name_of(collectives::misplace::Fault::kSwapBlocks) == "swap-blocks");
  CHECK(collectives::misplace::name_of(collectives::misplace::Fault::kDuplicateBlock) ==
        "duplicate-block");
  CHECK_FALSE(collectives::misplace::fault_named("swap").has_value());
  CHECK_FALSE(collectives::misplace::fault_named("").has_value());
}

TEST_CASE("misplace: each fault moves data inside the buffer and only there",
          "[verify][misplace]") {
  // Distinct 4-byte elements 0..count-1, and guard bytes after the buffer.
  const std::size_t count = 103, es = 4, guard = 16;
  const std::uint32_t stale_value = 0xdeadbeef;
  std::span<const std::byte> stale(reinterpret_cast<const std::byte*>(&stale_value), es);
  for (int p : {2, 3, 4, 8}) {
    for (collectives::misplace::Fault f : collectives::misplace::kAllFaults) {
      INFO("p " << p << " " << collectives::misplace::name_of(f));
      Bytes buf(count * es + guard, std::byte{0x5a});
      for (std::uint32_t i = 0; i < count; ++i) std::memcpy(buf.data() + i * es, &i, es);
      const Bytes before = buf;
      const collectives::misplace::Geometry g{
          .count = count, .elem_bytes = es, .blocks = p, .chunk_elems = 8};
      REQUIRE(collectives::misplace::apply(f, std::span(buf.data(), count * es), g, 1, 1, stale));
      CHECK(buf != before);
      for (std::size_t b = count * es; b < buf.size(); ++b) REQUIRE(buf[b] == std::byte{0x5a});
      // Every element is still one of the originals, or the stale value for a dropped chunk.
      for (std::size_t i = 0; i < count; ++i) {
        std::uint32_t v = 0;
        std::memcpy(&v, buf.data() + i * es, es);
        REQUIRE((v < count || (f == collectives::misplace::Fault::kDropChunk && v == stale_value)));
      }
    }
  }
  SECTION("no room: nothing changes and apply says so") {
    Bytes one(es, std::byte{1});
    const Bytes before = one;
    const collectives::misplace::Geometry single{
        .count = 1, .elem_bytes = es, .blocks = 1, .chunk_elems = 8};
    for (collectives::misplace::Fault f :
         {collectives::misplace::Fault::kSwapBlocks, collectives::misplace::Fault::kShiftElement,
          collectives::misplace::Fault::kShiftBlock, collectives::misplace::Fault::kPermuteChunk,
          collectives::misplace::Fault::kDuplicateBlock}) {
      CHECK_FALSE(collectives::misplace::apply(f, one, single, 0, 0, stale));
    }
    CHECK(one == before);
    Bytes empty;
    CHECK_FALSE(collectives::misplace::apply(collectives::misplace::Fault::kDropChunk, empty,
                                             single, 0, 0, stale));
  }
}

TEST_CASE("verify: every misplacement is caught in every collective, type and p in 2..16",
          "[verify][misplace]") {
  constexpr std::uint64_t kSeed = 42;
  for (int p = 2; p <= 16; ++p) {
    // Patterns kept alive for the whole p, so that pattern_for builds each (type, op) once:
    // the collectives that do not reduce share one.
    std::vector<std::shared_ptr<const collectives::VerifiablePattern>> keep;
    for (DataType t : kAllDataTypes) {
      for (Collective c : kCollectives) {
        for (ReduceOp op : kAllReduceOps) {
          if (!reduces(c) && op != ReduceOp::kSum) continue;
          keep.push_back(collectives::pattern_for(c, t, op, p));
          const collectives::VerifiablePattern& pattern = *keep.back();
          // Blocks of about 61 elements, sizes differing by one; at p = 8 also a vector that
          // spans table segments (float32 and bfloat16 sums: the costly case, kept small).
          std::vector<std::size_t> counts{61 * static_cast<std::size_t>(p) + 3};
          if (p == 8 && op == ReduceOp::kSum &&
              (t == DataType::kFloat32 || t == DataType::kBFloat16)) {
            counts.push_back(2 * collectives::VerifiablePattern::kTableLength + 11);
          }
          for (std::size_t count : counts) {
            INFO(name_of(c) << " " << name_of(t) << "/" << name_of(op) << " p " << p << " count "
                            << count);
            SimulatedCall call(c, p, t, op, count, pattern, kSeed);
            const Bytes& correct = call.correct(p - 1);
            // The elements the call moves: the faults cut them into its blocks (all-to-all:
            // whole blocks of count / p; the others: the count).
            const std::size_t moved = collectives::call_count(c, count, p);
            REQUIRE(call.deliver_and_count(correct, p - 1) == 0);
            Bytes poison(size_of(t));
            pattern.fill_poison(poison.data(), 1);
            for (const Injection& inj : injections(p)) {
              INFO(collectives::misplace::name_of(inj.fault)
                   << " block " << inj.block << " chunk " << inj.chunk << " of " << inj.chunk_elems
                   << " elements");
              Bytes faulty = correct;
              const collectives::misplace::Geometry g{.count = moved,
                                                      .elem_bytes = size_of(t),
                                                      .blocks = p,
                                                      .chunk_elems = inj.chunk_elems};
              REQUIRE(
                  collectives::misplace::apply(inj.fault, faulty, g, inj.block, inj.chunk, poison));
              REQUIRE(call.deliver_and_count(faulty, p - 1) > 0);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("verify: a result from the previous run's seed is wrong", "[verify][misplace]") {
  for (DataType t : kAllDataTypes) {
    for (Collective c : kCollectives) {
      INFO(name_of(c) << " " << name_of(t));
      const int p = 4;
      const std::size_t count = 1000;
      const auto shared = collectives::pattern_for(c, t, ReduceOp::kSum, p);
      const collectives::VerifiablePattern& pattern = *shared;
      SimulatedCall previous(c, p, t, ReduceOp::kSum, count, pattern, 6);
      SimulatedCall now(c, p, t, ReduceOp::kSum, count, pattern, 7);
      REQUIRE(now.deliver_and_count(now.correct(0), 0) == 0);
      CHECK(now.deliver_and_count(previous.correct(0), 0) > count / 2);
    }
  }
}

TEST_CASE("misplace: IBSCOPE_FAULT_MISPLACE parses <rank>:<fault> and refuses the rest",
          "[verify][misplace]") {
  const char* name = "IBSCOPE_FAULT_MISPLACE";
  const char* saved = std::getenv(name);
  const std::string keep = saved != nullptr ? saved : "";
  ::unsetenv(name);
  CHECK_FALSE(collectives::fault_misplace_from_env().has_value());
  ::setenv(name, "3:drop-chunk", 1);
  const auto m = collectives::fault_misplace_from_env();
  REQUIRE(m.has_value());
  CHECK(m->rank == 3);
  CHECK(m->fault == collectives::misplace::Fault::kDropChunk);
  for (const char* bad :
       {"3", "3:", ":swap-blocks", "x:swap-blocks", "3x:swap-blocks", "-1:swap-blocks", "3:swap"}) {
    INFO(bad);
    ::setenv(name, bad, 1);
    CHECK_THROWS_AS(collectives::fault_misplace_from_env(), UsageError);
    CHECK_THROWS_WITH(collectives::fault_misplace_from_env(), Catch::Contains("duplicate-block"));
  }
  if (saved != nullptr)
    ::setenv(name, keep.c_str(), 1);
  else
    ::unsetenv(name);
}

TEST_CASE("verify: all-gather blocks of different ranks differ at every block size",
          "[verify][misplace]") {
  // The old fill indexed an all-gather block by its global offset, so with blocks of
  // L - K = 25018 elements (and L more) rank 1's block equalled rank 0's element by element and a
  // swap passed. Block sizes across twice the table's length, those sizes and their neighbours
  // (uneven blocks) included; in the 32- and 64-bit types every moved element must count.
  constexpr std::size_t kL = collectives::VerifiablePattern::kTableLength;
  constexpr std::size_t kCollision = kL - 40503;
  std::vector<std::size_t> blocks{
      1, 2, 3, 61, kCollision - 1, kCollision, kCollision + 1, kCollision + kL, kL - 1, kL, kL + 1};
  for (std::size_t b = 7; b < 2 * kL + 100; b += 16381) blocks.push_back(b);
  constexpr std::uint64_t kSeed = 5;
  for (DataType t : kAllDataTypes) {
    const bool distinct = size_of(t) >= 4;
    for (int p : {2, 3, 4}) {
      const auto shared = collectives::pattern_for(Collective::kAllgather, t, ReduceOp::kSum, p);
      const collectives::VerifiablePattern& pattern = *shared;
      for (std::size_t block : blocks) {
        if (p == 4 && block > kL + 1) continue;  // the large blocks at 2 and 3 ranks suffice
        INFO(name_of(t) << " p " << p << " block " << block);
        // Every pair of ranks: their inputs differ in every element (16-bit: in most).
        Bytes a(block * size_of(t));
        for (int q = 0; q < p; ++q) {
          pattern.fill_input(q, a.data(), block, 0, kSeed);
          for (int r = 0; r < p; ++r) {
            if (r == q) continue;
            const std::size_t differ = pattern.count_wrong_input(r, a.data(), block, 0, kSeed);
            if (distinct)
              REQUIRE(differ == block);
            else
              REQUIRE(differ >= block / 2);
          }
        }
        for (const std::size_t count : {block * static_cast<std::size_t>(p), block * p + 1}) {
          SimulatedCall call(Collective::kAllgather, p, t, ReduceOp::kSum, count, pattern, kSeed);
          REQUIRE(call.deliver_and_count(call.correct(0), 0) == 0);
          for (collectives::misplace::Fault f : {collectives::misplace::Fault::kSwapBlocks,
                                                 collectives::misplace::Fault::kDuplicateBlock,
                                                 collectives::misplace::Fault::kShiftBlock}) {
            INFO(collectives::misplace::name_of(f) << " count " << count);
            Bytes faulty = call.correct(0);
            const collectives::misplace::Geometry g{
                .count = count, .elem_bytes = size_of(t), .blocks = p, .chunk_elems = 1};
            REQUIRE(collectives::misplace::apply(f, faulty, g, 0, 0, {}));
            const std::size_t wrong = call.deliver_and_count(faulty, 0);
            if (distinct)
              REQUIRE(wrong >= block);
            else
              REQUIRE(wrong > 0);
          }
        }
      }
    }
  }
}

TEST_CASE("verify: ranks a table length apart differ in every element in a distinct table",
          "[verify][misplace]") {
  // Past L ranks two ranks share a table shift; their epoch moves the values inside the buckets.
  constexpr std::size_t kL = collectives::VerifiablePattern::kTableLength;
  const std::size_t count = 4099;
  for (DataType t : {DataType::kFloat32, DataType::kInt32, DataType::kFloat64, DataType::kInt64}) {
    const auto shared = collectives::pattern_for(Collective::kAllgather, t, ReduceOp::kSum, 2);
    const collectives::VerifiablePattern& pattern = *shared;
    Bytes a(count * size_of(t));
    for (int q : {0, 1, 777}) {
      for (int k : {1, 2, 511}) {
        const int r = q + k * static_cast<int>(kL);
        INFO(name_of(t) << " ranks " << q << " and " << r);
        pattern.fill_input(r, a.data(), count, 0, 3);
        REQUIRE(pattern.count_wrong_input(r, a.data(), count, 0, 3) == 0);
        REQUIRE(pattern.count_wrong_input(q, a.data(), count, 0, 3) == count);
        for (std::size_t i = 0; i < count; i += 97) {
          REQUIRE(std::abs(pattern.input(r, i, 3)) <= static_cast<double>(pattern.value_bound()));
        }
      }
    }
  }
}
