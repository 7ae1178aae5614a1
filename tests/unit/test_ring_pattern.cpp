// Ring pattern: simulated symbolically for every p in 1..64. Each element of each rank's buffer
// carries the set of ranks whose contribution it holds (a 64-bit mask), so a segment received
// twice, received from the wrong rank or left incomplete shows up as a wrong mask.

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ibscope/collectives/pattern/ring.hpp"
#include "unit/pattern_fixtures.hpp"

namespace pattern = ibscope::collectives::pattern;

using namespace ibscope::test::pattern_sim;

namespace {

// Copies a span out of a rank's buffer in chunks of `chunk_elems`, as the transport would.
std::vector<std::uint64_t> send_span(const std::vector<std::uint64_t>& buf, pattern::Span span,
                                     std::size_t chunk_elems) {
  std::vector<std::uint64_t> msg;
  msg.reserve(span.count);
  const std::size_t chunks = pattern::chunk_count(span.count, chunk_elems);
  for (std::size_t c = 0; c < chunks; ++c) {
    const pattern::Span ch = pattern::chunk_of(span, chunk_elems, c);
    for (std::size_t i = 0; i < ch.count; ++i) msg.push_back(buf[ch.offset + i]);
  }
  return msg;
}

// Runs reduce-scatter then all-gather for p ranks over `count` elements. Returns an empty
// string on success, otherwise the first thing that went wrong.
std::string simulate_ring(int p, std::size_t count, std::size_t chunk_elems) {
  const std::uint64_t full = full_mask(p);
  std::vector<std::vector<std::uint64_t>> state(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) state[r].assign(count, std::uint64_t{1} << r);
  auto where = [&](const char* phase, int step, int rank) {
    return std::string(phase) + " p=" + std::to_string(p) + " count=" + std::to_string(count) +
           " step=" + std::to_string(step) + " rank=" + std::to_string(rank) + ": ";
  };

  struct Message {
    int segment;
    std::vector<std::uint64_t> data;
  };

  for (int step = 0; step + 1 < p; ++step) {
    // Every rank sends before any rank receives: the exchange of one step is simultaneous.
    std::vector<Message> in_flight(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      const int seg = pattern::ring_reduce_scatter_step(r, p, step).send_segment;
      if (seg < 0 || seg >= p) return where("rs send", step, r) + "segment out of range";
      in_flight[pattern::ring_next(r, p)] =
          Message{seg, send_span(state[r], pattern::ring_segment(count, p, seg), chunk_elems)};
    }
    for (int r = 0; r < p; ++r) {
      const Message& m = in_flight[r];
      const int expect = pattern::ring_reduce_scatter_step(r, p, step).recv_segment;
      if (m.segment != expect) return where("rs recv", step, r) + "got another segment";
      const pattern::Span span = pattern::ring_segment(count, p, expect);
      if (m.data.size() != span.count) return where("rs recv", step, r) + "size mismatch";
      for (std::size_t i = 0; i < span.count; ++i) {
        std::uint64_t& mine = state[r][span.offset + i];
        if ((mine & m.data[i]) != 0) return where("rs recv", step, r) + "contribution twice";
        mine |= m.data[i];
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    const pattern::Span owned = pattern::ring_segment(count, p, pattern::ring_owned_segment(r, p));
    for (std::size_t i = 0; i < owned.count; ++i) {
      if (state[r][owned.offset + i] != full) {
        return where("after rs", p - 1, r) + "owned segment not fully reduced";
      }
    }
  }

  for (int step = 0; step + 1 < p; ++step) {
    std::vector<Message> in_flight(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      const int seg = pattern::ring_allgather_step(r, p, step).send_segment;
      if (seg < 0 || seg >= p) return where("ag send", step, r) + "segment out of range";
      in_flight[pattern::ring_next(r, p)] =
          Message{seg, send_span(state[r], pattern::ring_segment(count, p, seg), chunk_elems)};
    }
    for (int r = 0; r < p; ++r) {
      const Message& m = in_flight[r];
      if (m.segment != pattern::ring_allgather_step(r, p, step).recv_segment) {
        return where("ag recv", step, r) + "got another segment";
      }
      const pattern::Span span = pattern::ring_segment(count, p, m.segment);
      if (m.data.size() != span.count) return where("ag recv", step, r) + "size mismatch";
      for (std::size_t i = 0; i < span.count; ++i) {
        if (m.data[i] != full) return where("ag recv", step, r) + "incomplete segment sent";
        state[r][span.offset + i] = m.data[i];
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < count; ++i) {
      if (state[r][i] != full) return where("after ag", p - 1, r) + "element not complete";
    }
  }
  return {};
}

}  // namespace

TEST_CASE("ring: next and prev and mod wrap around", "[pattern][ring]") {
  CHECK(pattern::ring_next(0, 1) == 0);
  CHECK(pattern::ring_prev(0, 1) == 0);
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (int r = 0; r < p; ++r) {
      const int next = pattern::ring_next(r, p);
      const int prev = pattern::ring_prev(r, p);
      REQUIRE(next == (r + 1) % p);
      REQUIRE(prev == (r + p - 1) % p);
      REQUIRE(pattern::ring_prev(next, p) == r);
      REQUIRE(pattern::ring_next(prev, p) == r);
    }
  }
  CHECK(pattern::mod(-1, 5) == 4);
  CHECK(pattern::mod(-5, 5) == 0);
  CHECK(pattern::mod(-6, 5) == 4);
  CHECK(pattern::mod(-130, 64) == 62);
  CHECK(pattern::mod(7, 5) == 2);
  CHECK(pattern::mod(0, 1) == 0);
}

TEST_CASE("ring: segments tile the buffer with sizes differing by at most one", "[pattern][ring]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    auto counts = counts_for(p);
    counts.push_back(100003);
    for (std::size_t count : counts) {
      INFO("p=" << p << " count=" << count);
      std::size_t next_offset = 0;
      std::size_t smallest = count + 1, largest = 0;
      for (int s = 0; s < p; ++s) {
        const pattern::Span seg = pattern::ring_segment(count, p, s);
        REQUIRE(seg.offset == next_offset);
        next_offset += seg.count;
        smallest = std::min(smallest, seg.count);
        largest = std::max(largest, seg.count);
      }
      REQUIRE(next_offset == count);
      REQUIRE(largest - smallest <= 1);
      REQUIRE(smallest == count / static_cast<std::size_t>(p));
    }
  }
}

TEST_CASE("ring: chunks tile every segment", "[pattern][ring]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    auto counts = counts_for(p);
    counts.push_back(100003);
    for (std::size_t count : counts) {
      for (std::size_t chunk_elems :
           {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64},
            std::size_t{1000}, std::size_t{1} << 20}) {
        INFO("p=" << p << " count=" << count << " chunk_elems=" << chunk_elems);
        const std::size_t c = chunk_elems == 0 ? 1 : chunk_elems;  // 0 is treated as 1
        for (int s = 0; s < p; ++s) {
          INFO("segment " << s);
          const pattern::Span seg = pattern::ring_segment(count, p, s);
          const std::size_t n = pattern::chunk_count(seg.count, chunk_elems);
          REQUIRE(n == (seg.count + c - 1) / c);
          // Plain comparisons in the inner loop: one REQUIRE per chunk would dominate run time.
          std::size_t next_offset = seg.offset;
          for (std::size_t k = 0; k < n; ++k) {
            const pattern::Span ch = pattern::chunk_of(seg, chunk_elems, k);
            const bool full_or_last = ch.count == c || k + 1 == n;
            if (ch.offset != next_offset || ch.count < 1 || ch.count > c || !full_or_last) {
              FAIL("chunk " << k << " of " << n << " is {" << ch.offset << ", " << ch.count
                            << "}, expected to start at " << next_offset);
            }
            next_offset += ch.count;
          }
          REQUIRE(next_offset == seg.offset + seg.count);
        }
      }
    }
  }
}

TEST_CASE("ring: chunk_count edge cases", "[pattern][ring]") {
  CHECK(pattern::chunk_count(0, 0) == 0);
  CHECK(pattern::chunk_count(0, 5) == 0);
  CHECK(pattern::chunk_count(5, 0) == 5);  // 0 is treated as 1
  CHECK(pattern::chunk_count(5, 5) == 1);
  CHECK(pattern::chunk_count(6, 5) == 2);
  CHECK(pattern::chunk_count(10, 5) == 2);
  CHECK(pattern::chunk_count(1, 1000) == 1);
  const pattern::Span span{100, 10};
  const pattern::Span first = pattern::chunk_of(span, 0, 0);
  CHECK(first.offset == 100);
  CHECK(first.count == 1);
  const pattern::Span last = pattern::chunk_of(span, 4, 2);
  CHECK(last.offset == 108);
  CHECK(last.count == 2);
}

TEST_CASE("ring: the segment sent at step k+1 is the one received at step k", "[pattern][ring]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (int r = 0; r < p; ++r) {
      INFO("p=" << p << " rank=" << r);
      for (int k = 0; k + 2 < p; ++k) {
        REQUIRE(pattern::ring_reduce_scatter_step(r, p, k + 1).send_segment ==
                pattern::ring_reduce_scatter_step(r, p, k).recv_segment);
        REQUIRE(pattern::ring_allgather_step(r, p, k + 1).send_segment ==
                pattern::ring_allgather_step(r, p, k).recv_segment);
      }
      if (p >= 2) {
        // Reduce-scatter ends by completing the owned segment, which all-gather sends first.
        REQUIRE(pattern::ring_reduce_scatter_step(r, p, p - 2).recv_segment ==
                pattern::ring_owned_segment(r, p));
        REQUIRE(pattern::ring_allgather_step(r, p, 0).send_segment ==
                pattern::ring_owned_segment(r, p));
      }
      // A rank never receives its own first segment back during reduce-scatter.
      for (int k = 0; k + 1 < p; ++k) {
        REQUIRE(pattern::ring_reduce_scatter_step(r, p, k).recv_segment != r);
      }
    }
  }
}

TEST_CASE("ring: steps agree between neighbours", "[pattern][ring]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (int r = 0; r < p; ++r) {
      const int next = pattern::ring_next(r, p);
      for (int k = 0; k + 1 < p; ++k) {
        INFO("p=" << p << " rank=" << r << " step=" << k);
        REQUIRE(pattern::ring_reduce_scatter_step(r, p, k).send_segment ==
                pattern::ring_reduce_scatter_step(next, p, k).recv_segment);
        REQUIRE(pattern::ring_allgather_step(r, p, k).send_segment ==
                pattern::ring_allgather_step(next, p, k).recv_segment);
      }
    }
  }
}

TEST_CASE("ring: symbolic all-reduce is complete for every p in 1..64", "[pattern][ring]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (std::size_t count : counts_for(p)) {
      for (std::size_t chunk_elems : {std::size_t{0}, std::size_t{7}, std::size_t{4096}}) {
        const std::string error = simulate_ring(p, count, chunk_elems);
        INFO("chunk_elems=" << chunk_elems);
        REQUIRE(error == "");
      }
    }
  }
}

TEST_CASE("ring: symbolic all-reduce of a large prime count", "[pattern][ring]") {
  for (int p : {1, 2, 3, 7, 8, 13, 31, 63, 64}) {
    const std::string error = simulate_ring(p, 100003, 1000);
    REQUIRE(error == "");
  }
}
