// Recursive doubling and Rabenseifner (recursive halving + doubling) patterns, simulated
// symbolically for every p in 1..64. Each element of each rank's buffer carries the set of ranks
// whose contribution it holds (a 64-bit mask): a message must arrive with the range its
// receiver expects, a contribution added twice is caught when it arrives (the masks overlap),
// and at the end every element on every rank must hold every rank's contribution.

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ibscope/collectives/algorithms/rd_allreduce.hpp"
#include "ibscope/collectives/algorithms/rhd_allreduce.hpp"
#include "ibscope/collectives/pattern/recursive.hpp"
#include "unit/pattern_fixtures.hpp"

namespace pattern = ibscope::collectives::pattern;
using pattern::PrePostRole;
using pattern::Span;

using namespace ibscope::test::pattern_sim;

namespace {

struct Message {
  int from = -1;
  Span span;
  std::vector<std::uint64_t> data;
  bool consumed = false;
};

// One simultaneous exchange: every message is posted before any is received. Keyed by
// destination rank; a rank receives at most one message per phase in these patterns.
class Exchange {
 public:
  explicit Exchange(int p) : box_(static_cast<std::size_t>(p)) {}

  // Copies `span` out of `buf` in chunks of `chunk_elems`, as the transport would.
  std::string send(int from, int to, const std::vector<std::uint64_t>& buf, Span span,
                   std::size_t chunk_elems) {
    if (to < 0 || to >= static_cast<int>(box_.size())) return "partner out of range";
    if (to == from) return "sends to itself";
    if (span.offset + span.count > buf.size()) return "range outside the buffer";
    Message& m = box_[static_cast<std::size_t>(to)];
    if (m.from >= 0) return "two messages to one rank in one step";
    m.from = from;
    m.span = span;
    const std::size_t chunks = pattern::chunk_count(span.count, chunk_elems);
    for (std::size_t c = 0; c < chunks; ++c) {
      const Span ch = pattern::chunk_of(span, chunk_elems, c);
      for (std::size_t i = 0; i < ch.count; ++i) m.data.push_back(buf[ch.offset + i]);
    }
    return {};
  }

  // The message for `to`, which must come from `from` with exactly the range `expect`.
  std::string receive(int to, int from, Span expect, const Message** out) {
    Message& m = box_[static_cast<std::size_t>(to)];
    if (m.from < 0) return "expects a message nobody sent";
    if (m.from != from) return "message from another rank";
    if (m.span.offset != expect.offset || m.span.count != expect.count) {
      return "range mismatch: sent {" + std::to_string(m.span.offset) + ", " +
             std::to_string(m.span.count) + "}, expected {" + std::to_string(expect.offset) + ", " +
             std::to_string(expect.count) + "}";
    }
    if (m.data.size() != expect.count) return "length mismatch";
    m.consumed = true;
    *out = &m;
    return {};
  }

  std::string all_consumed() const {
    for (const Message& m : box_) {
      if (m.from >= 0 && !m.consumed) return "a message nobody received";
    }
    return {};
  }

 private:
  std::vector<Message> box_;
};

std::string reduce_into(std::vector<std::uint64_t>& buf, const Message& m) {
  for (std::size_t i = 0; i < m.span.count; ++i) {
    std::uint64_t& mine = buf[m.span.offset + i];
    if ((mine & m.data[i]) != 0) return "contribution added twice";
    mine |= m.data[i];
  }
  return {};
}

std::string copy_into(std::vector<std::uint64_t>& buf, const Message& m, std::uint64_t full) {
  for (std::size_t i = 0; i < m.span.count; ++i) {
    if (m.data[i] != full) return "incomplete element sent";
    buf[m.span.offset + i] = m.data[i];
  }
  return {};
}

enum class Algo { kRd, kRhd };

// Runs pre-step, the power-of-two part and post-step for p ranks over `count` elements.
// Returns an empty string on success, otherwise the first thing that went wrong.
std::string simulate(Algo algo, int p, std::size_t count, std::size_t chunk_elems) {
  const std::uint64_t full = full_mask(p);
  std::vector<std::vector<std::uint64_t>> state(static_cast<std::size_t>(p));
  std::vector<pattern::RecursiveLayout> layout;
  for (int r = 0; r < p; ++r) {
    state[static_cast<std::size_t>(r)].assign(count, std::uint64_t{1} << r);
    layout.push_back(pattern::recursive_layout(r, p));
  }
  auto buf = [&](int r) -> std::vector<std::uint64_t>& {
    return state[static_cast<std::size_t>(r)];
  };
  auto lay = [&](int r) -> const pattern::RecursiveLayout& {
    return layout[static_cast<std::size_t>(r)];
  };
  auto where = [&](const std::string& phase, int step, int rank) {
    return std::string(algo == Algo::kRd ? "rd " : "rhd ") + phase + " p=" + std::to_string(p) +
           " count=" + std::to_string(count) + " chunk=" + std::to_string(chunk_elems) +
           " step=" + std::to_string(step) + " rank=" + std::to_string(rank) + ": ";
  };
  const Span whole{0, count};
  const int pow2 = lay(0).pow2;
  const int steps = lay(0).steps;
  std::string err;

  // Pre-step: the even rank of each pair hands its vector to the odd one.
  {
    Exchange ex(p);
    for (int r = 0; r < p; ++r) {
      if (lay(r).role != PrePostRole::kSendIdle) continue;
      err = ex.send(r, lay(r).prepost_partner, buf(r), whole, chunk_elems);
      if (!err.empty()) return where("pre send", 0, r) + err;
    }
    for (int r = 0; r < p; ++r) {
      if (lay(r).role != PrePostRole::kReduceJoin) continue;
      const Message* m = nullptr;
      err = ex.receive(r, lay(r).prepost_partner, whole, &m);
      if (err.empty()) err = reduce_into(buf(r), *m);
      if (!err.empty()) return where("pre recv", 0, r) + err;
    }
    err = ex.all_consumed();
    if (!err.empty()) return where("pre", 0, -1) + err;
  }

  auto real = [&](int new_rank) { return pattern::recursive_rank_of(new_rank, p); };
  auto partner_of = [&](int r, int k) {
    return real(pattern::recursive_partner(lay(r).new_rank, k));
  };
  const std::size_t halving_chunk = algo == Algo::kRd ? 0 : chunk_elems;

  // Recursive doubling of whole vectors (rd), or recursive halving (rhd's reduce-scatter).
  for (int k = 0; k < steps; ++k) {
    Exchange ex(p);
    for (int r = 0; r < p; ++r) {
      if (lay(r).new_rank < 0) continue;
      const Span send =
          algo == Algo::kRd ? whole : pattern::halving_step(count, pow2, lay(r).new_rank, k).send;
      err = ex.send(r, partner_of(r, k), buf(r), send, halving_chunk);
      if (!err.empty()) return where("halving send", k, r) + err;
    }
    for (int r = 0; r < p; ++r) {
      if (lay(r).new_rank < 0) continue;
      const Span keep =
          algo == Algo::kRd ? whole : pattern::halving_step(count, pow2, lay(r).new_rank, k).keep;
      const Message* m = nullptr;
      err = ex.receive(r, partner_of(r, k), keep, &m);
      if (err.empty()) err = reduce_into(buf(r), *m);
      if (!err.empty()) return where("halving recv", k, r) + err;
    }
    err = ex.all_consumed();
    if (!err.empty()) return where("halving", k, -1) + err;
  }

  if (algo == Algo::kRhd) {
    // The owned blocks tile the vector and are complete; then the all-gather.
    std::size_t next = 0;
    std::vector<int> covered(count, 0);
    for (int r = 0; r < p; ++r) {
      if (lay(r).new_rank < 0) continue;
      const Span own = pattern::halving_owned(count, pow2, lay(r).new_rank);
      if (own.offset + own.count > count) return where("owned", steps, r) + "outside the vector";
      for (std::size_t i = 0; i < own.count; ++i) {
        ++covered[own.offset + i];
        if (buf(r)[own.offset + i] != full) return where("owned", steps, r) + "not fully reduced";
      }
      next += own.count;
    }
    if (next != count) return where("owned", steps, -1) + "owned ranges do not add up to count";
    for (std::size_t i = 0; i < count; ++i) {
      if (covered[i] != 1) return where("owned", steps, -1) + "element owned not exactly once";
    }

    for (int j = 0; j < steps; ++j) {
      const int k = steps - 1 - j;  // partner of doubling step j is that of halving step k
      Exchange ex(p);
      for (int r = 0; r < p; ++r) {
        if (lay(r).new_rank < 0) continue;
        const Span send = pattern::doubling_step(count, pow2, lay(r).new_rank, j).send;
        err = ex.send(r, partner_of(r, k), buf(r), send, chunk_elems);
        if (!err.empty()) return where("doubling send", j, r) + err;
      }
      for (int r = 0; r < p; ++r) {
        if (lay(r).new_rank < 0) continue;
        const Span recv = pattern::doubling_step(count, pow2, lay(r).new_rank, j).recv;
        const Message* m = nullptr;
        err = ex.receive(r, partner_of(r, k), recv, &m);
        if (err.empty()) err = copy_into(buf(r), *m, full);
        if (!err.empty()) return where("doubling recv", j, r) + err;
      }
      err = ex.all_consumed();
      if (!err.empty()) return where("doubling", j, -1) + err;
    }
  }

  // Post-step: the odd rank returns the result to its even partner.
  {
    Exchange ex(p);
    for (int r = 0; r < p; ++r) {
      if (lay(r).role != PrePostRole::kReduceJoin) continue;
      err = ex.send(r, lay(r).prepost_partner, buf(r), whole, chunk_elems);
      if (!err.empty()) return where("post send", 0, r) + err;
    }
    for (int r = 0; r < p; ++r) {
      if (lay(r).role != PrePostRole::kSendIdle) continue;
      const Message* m = nullptr;
      err = ex.receive(r, lay(r).prepost_partner, whole, &m);
      if (err.empty()) err = copy_into(buf(r), *m, full);
      if (!err.empty()) return where("post recv", 0, r) + err;
    }
    err = ex.all_consumed();
    if (!err.empty()) return where("post", 0, -1) + err;
  }

  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < count; ++i) {
      if (buf(r)[i] != full) return where("end", steps, r) + "element not complete";
    }
  }
  return {};
}

}  // namespace

TEST_CASE("recursive: power of two part and log2", "[pattern][recursive]") {
  CHECK(pattern::pow2_floor(1) == 1);
  CHECK(pattern::pow2_floor(2) == 2);
  CHECK(pattern::pow2_floor(3) == 2);
  CHECK(pattern::pow2_floor(63) == 32);
  CHECK(pattern::pow2_floor(64) == 64);
  CHECK(pattern::pow2_floor(65) == 64);
  CHECK(pattern::log2_exact(1) == 0);
  CHECK(pattern::log2_exact(64) == 6);
  for (int p = 1; p <= kMaxRanks; ++p) {
    const int q = pattern::pow2_floor(p);
    INFO("p=" << p);
    REQUIRE((q & (q - 1)) == 0);
    REQUIRE(q <= p);
    REQUIRE(p < 2 * q);
    REQUIRE((1 << pattern::log2_exact(q)) == q);
  }
}

TEST_CASE("recursive: roles pair up and new ranks are a bijection", "[pattern][recursive]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    const int pow2 = pattern::pow2_floor(p);
    const int rem = p - pow2;
    std::vector<int> seen(static_cast<std::size_t>(pow2), 0);
    int idle = 0;
    for (int r = 0; r < p; ++r) {
      INFO("p=" << p << " rank=" << r);
      const auto l = pattern::recursive_layout(r, p);
      REQUIRE(l.p == p);
      REQUIRE(l.pow2 == pow2);
      REQUIRE((1 << l.steps) == pow2);
      switch (l.role) {
        case PrePostRole::kNone:
          REQUIRE(r >= 2 * rem);
          REQUIRE(l.prepost_partner == -1);
          break;
        case PrePostRole::kSendIdle: {
          REQUIRE(r % 2 == 0);
          REQUIRE(l.new_rank == -1);
          const auto pl = pattern::recursive_layout(l.prepost_partner, p);
          REQUIRE(pl.role == PrePostRole::kReduceJoin);
          REQUIRE(pl.prepost_partner == r);
          ++idle;
          break;
        }
        case PrePostRole::kReduceJoin: {
          REQUIRE(r % 2 == 1);
          const auto pl = pattern::recursive_layout(l.prepost_partner, p);
          REQUIRE(pl.role == PrePostRole::kSendIdle);
          REQUIRE(pl.prepost_partner == r);
          break;
        }
      }
      if (l.new_rank >= 0) {
        REQUIRE(l.new_rank < pow2);
        ++seen[static_cast<std::size_t>(l.new_rank)];
        REQUIRE(pattern::recursive_rank_of(l.new_rank, p) == r);
      }
    }
    REQUIRE(idle == rem);
    for (int q = 0; q < pow2; ++q) REQUIRE(seen[static_cast<std::size_t>(q)] == 1);
  }
}

TEST_CASE("recursive: partners are symmetric and distinct at every step", "[pattern][recursive]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    const int pow2 = pattern::pow2_floor(p);
    const int steps = pattern::log2_exact(pow2);
    for (int q = 0; q < pow2; ++q) {
      for (int k = 0; k < steps; ++k) {
        INFO("p=" << p << " new rank=" << q << " step=" << k);
        const int partner = pattern::recursive_partner(q, k);
        REQUIRE(partner >= 0);
        REQUIRE(partner < pow2);
        REQUIRE(partner != q);
        REQUIRE(pattern::recursive_partner(partner, k) == q);
      }
    }
  }
}

TEST_CASE("recursive: halving ranges agree between partners and halve the window",
          "[pattern][recursive]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    const int pow2 = pattern::pow2_floor(p);
    const int steps = pattern::log2_exact(pow2);
    auto counts = counts_for(p);
    counts.push_back(100003);
    for (std::size_t count : counts) {
      for (int q = 0; q < pow2; ++q) {
        std::size_t window = count;
        Span prev_keep{0, count};
        for (int k = 0; k < steps; ++k) {
          INFO("p=" << p << " count=" << count << " new rank=" << q << " step=" << k);
          const auto h = pattern::halving_step(count, pow2, q, k);
          const auto hp = pattern::halving_step(count, pow2, pattern::recursive_partner(q, k), k);
          REQUIRE(h.send.offset == hp.keep.offset);
          REQUIRE(h.send.count == hp.keep.count);
          REQUIRE(h.keep.offset == hp.send.offset);
          REQUIRE(h.keep.count == hp.send.count);
          // send and keep tile the window kept at the previous step, halves within one element
          // per block.
          REQUIRE(h.send.count + h.keep.count == window);
          const Span lo = h.send.offset < h.keep.offset ? h.send : h.keep;
          const Span hi = h.send.offset < h.keep.offset ? h.keep : h.send;
          REQUIRE(lo.offset == prev_keep.offset);
          REQUIRE(lo.offset + lo.count == hi.offset);
          REQUIRE(lo.count >= hi.count);
          window = h.keep.count;
          prev_keep = h.keep;
        }
        const Span own = pattern::halving_owned(count, pow2, q);
        REQUIRE(own.offset == prev_keep.offset);
        REQUIRE(own.count == prev_keep.count);
        // Doubling step j mirrors halving step steps-1-j.
        for (int j = 0; j < steps; ++j) {
          const auto d = pattern::doubling_step(count, pow2, q, j);
          const auto h = pattern::halving_step(count, pow2, q, steps - 1 - j);
          REQUIRE(d.send.offset == h.keep.offset);
          REQUIRE(d.send.count == h.keep.count);
          REQUIRE(d.recv.offset == h.send.offset);
          REQUIRE(d.recv.count == h.send.count);
        }
      }
    }
  }
}

TEST_CASE("recursive: block ranges tile the vector", "[pattern][recursive]") {
  for (int blocks = 1; blocks <= kMaxRanks; ++blocks) {
    for (std::size_t count : counts_for(blocks)) {
      INFO("blocks=" << blocks << " count=" << count);
      const Span all = pattern::block_range(count, blocks, 0, blocks);
      REQUIRE(all.offset == 0);
      REQUIRE(all.count == count);
      for (int b = 0; b < blocks; ++b) {
        const Span one = pattern::block_range(count, blocks, b, 1);
        const Span ring = pattern::ring_segment(count, blocks, b);
        REQUIRE(one.offset == ring.offset);
        REQUIRE(one.count == ring.count);
      }
    }
  }
}

TEST_CASE("recursive doubling: symbolic all-reduce is complete for every p in 1..64",
          "[pattern][recursive]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (std::size_t count : counts_for(p)) {
      const std::string error = simulate(Algo::kRd, p, count, 0);
      REQUIRE(error == "");
    }
  }
}

TEST_CASE("rabenseifner: symbolic all-reduce is complete for every p in 1..64",
          "[pattern][recursive]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (std::size_t count : counts_for(p)) {
      for (std::size_t chunk_elems : {std::size_t{0}, std::size_t{7}, std::size_t{4096}}) {
        const std::string error = simulate(Algo::kRhd, p, count, chunk_elems);
        REQUIRE(error == "");
      }
    }
  }
}

TEST_CASE("rabenseifner: symbolic all-reduce of a large prime count", "[pattern][recursive]") {
  for (int p : {1, 2, 3, 7, 8, 33, 63, 64}) {
    const std::string error = simulate(Algo::kRhd, p, 100003, 1000);
    REQUIRE(error == "");
    REQUIRE(simulate(Algo::kRd, p, 10007, 0) == "");
  }
}

TEST_CASE("recursive: cost formulas", "[recursive][cost]") {
  const ibscope::collectives::LinkCost c{1e-6, 1e-9, 1e-10};
  const double n = 1e6;
  CHECK(ibscope::collectives::rd_allreduce_cost_s(c, n, 1) == 0);
  CHECK(ibscope::collectives::rhd_allreduce_cost_s(c, n, 1) == 0);
  CHECK(ibscope::collectives::rd_allreduce_cost_s(c, n, 2) == Approx(1e-6 + 1e-3 + 1e-4));
  CHECK(ibscope::collectives::rhd_allreduce_cost_s(c, n, 2) == Approx(2e-6 + 1e-3 + 0.5e-4));
  // 8 = 2^3: three full exchanges; Rabenseifner: 6 alpha, 2*7/8 n beta, 7/8 n gamma.
  CHECK(ibscope::collectives::rd_allreduce_cost_s(c, n, 8) == Approx(3 * (1e-6 + 1e-3 + 1e-4)));
  CHECK(ibscope::collectives::rhd_allreduce_cost_s(c, n, 8) ==
        Approx(6e-6 + 2 * 7.0 / 8 * 1e-3 + 7.0 / 8 * 1e-4));
  // 5 = 4 + 1: the pre-step (alpha + n beta + n gamma) and post-step (alpha + n beta) on top.
  const double prepost = 2e-6 + 2e-3 + 1e-4;
  CHECK(ibscope::collectives::rd_allreduce_cost_s(c, n, 5) ==
        Approx(ibscope::collectives::rd_allreduce_cost_s(c, n, 4) + prepost));
  CHECK(ibscope::collectives::rhd_allreduce_cost_s(c, n, 5) ==
        Approx(ibscope::collectives::rhd_allreduce_cost_s(c, n, 4) + prepost));
  // Rabenseifner moves less than recursive doubling for large n, more alphas for small n.
  CHECK(ibscope::collectives::rhd_allreduce_cost_s(c, 1e8, 16) <
        ibscope::collectives::rd_allreduce_cost_s(c, 1e8, 16));
  CHECK(ibscope::collectives::rhd_allreduce_cost_s(c, 8, 16) >
        ibscope::collectives::rd_allreduce_cost_s(c, 8, 16));
}
