// Reduction kernels, verifiable patterns and the half/bfloat16 conversions, on host memory.

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ibscope/collectives/harness/verify.hpp"
#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/reduce.hpp"

using ibscope::DataType;
using ibscope::ReduceOp;

namespace {

using Bytes = std::vector<std::byte>;

constexpr int kRankCounts[] = {1, 2, 3, 5, 7, 8, 16, 64};

std::string label(DataType t, ReduceOp op) {
  return std::string(ibscope::name_of(t)) + "/" + std::string(ibscope::name_of(op));
}

template <typename T>
T get(const std::byte* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

template <typename T>
void put(std::byte* p, T x) {
  std::memcpy(p, &x, sizeof(T));
}

// Element i of a typed buffer, as a double.
double load(DataType t, const Bytes& buf, std::size_t i) {
  const std::byte* p = buf.data() + i * ibscope::size_of(t);
  switch (t) {
    case DataType::kFloat32:
      return get<float>(p);
    case DataType::kFloat64:
      return get<double>(p);
    case DataType::kInt32:
      return static_cast<double>(get<std::int32_t>(p));
    case DataType::kInt64:
      return static_cast<double>(get<std::int64_t>(p));
    case DataType::kFloat16:
      return ibscope::half_to_float(get<std::uint16_t>(p));
    case DataType::kBFloat16:
      return ibscope::bf16_to_float(get<std::uint16_t>(p));
  }
  return 0;
}

// Stores an exactly representable small integer.
void store(DataType t, Bytes& buf, std::size_t i, double v) {
  std::byte* p = buf.data() + i * ibscope::size_of(t);
  const auto f = static_cast<float>(v);
  switch (t) {
    case DataType::kFloat32:
      return put(p, f);
    case DataType::kFloat64:
      return put(p, v);
    case DataType::kInt32:
      return put(p, static_cast<std::int32_t>(v));
    case DataType::kInt64:
      return put(p, static_cast<std::int64_t>(v));
    case DataType::kFloat16:
      return put(p, ibscope::float_to_half(f));
    case DataType::kBFloat16:
      return put(p, ibscope::float_to_bf16(f));
  }
}

Bytes make_buffer(DataType t, std::size_t count) {
  return Bytes(count * ibscope::size_of(t), std::byte{0});
}

double apply(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      return std::max(a, b);
  }
  return 0;
}

bool is_half_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool is_bf16_nan(std::uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

float float_from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

}  // namespace

TEST_CASE("datatype: names parse back and unknown names are usage errors", "[verify][datatype]") {
  for (DataType t : ibscope::kAllDataTypes) {
    CHECK(ibscope::parse_data_type(ibscope::name_of(t)) == t);
  }
  for (ReduceOp op : ibscope::kAllReduceOps) {
    CHECK(ibscope::parse_reduce_op(ibscope::name_of(op)) == op);
  }
  CHECK(ibscope::parse_data_type("fp32") == DataType::kFloat32);
  CHECK(ibscope::parse_data_type("fp16") == DataType::kFloat16);
  CHECK(ibscope::parse_data_type("bf16") == DataType::kBFloat16);
  CHECK(ibscope::size_of(DataType::kFloat16) == 2);
  CHECK(ibscope::size_of(DataType::kFloat64) == 8);
  CHECK_THROWS_AS(ibscope::parse_data_type("float128"), ibscope::UsageError);
  CHECK_THROWS_WITH(ibscope::parse_data_type("float128"), Catch::Contains("bfloat16"));
  CHECK_THROWS_AS(ibscope::parse_reduce_op("prod"), ibscope::UsageError);
  CHECK_THROWS_WITH(ibscope::parse_reduce_op("prod"), Catch::Contains("sum, min, max"));
}

TEST_CASE("verify: expected() is the reduction of input() in double", "[verify]") {
  constexpr std::size_t kL = ibscope::collectives::VerifiablePattern::kTableLength;
  // Indices at the start, around segment boundaries and far out.
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < 64; ++i) indices.push_back(i);
  for (std::size_t i = kL - 8; i < kL + 8; ++i) indices.push_back(i);
  for (std::size_t i = 0; i < 8; ++i) indices.push_back(3 * kL + 1000 + i);
  indices.push_back(std::size_t{1} << 40);
  for (DataType t : ibscope::kAllDataTypes) {
    for (ReduceOp op : ibscope::kAllReduceOps) {
      for (int nranks : kRankCounts) {
        INFO(label(t, op) << " nranks=" << nranks);
        const ibscope::collectives::VerifiablePattern pat(t, op, nranks);
        const auto bound = static_cast<double>(pat.value_bound());
        // Sum: every partial sum, in any order, stays within the type's exact integers.
        if (op == ReduceOp::kSum) {
          const double limit = t == DataType::kBFloat16  ? 256
                               : t == DataType::kFloat16 ? 2048
                                                         : 16777216;
          REQUIRE(bound * nranks <= limit);
        }
        for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{77}}) {
          for (std::size_t i : indices) {
            double acc = pat.input(0, i, seed);
            for (int r = 1; r < nranks; ++r) acc = apply(op, acc, pat.input(r, i, seed));
            REQUIRE(pat.expected(i, seed) == acc);
            // Inputs are small integers in the pattern's range.
            for (int r = 0; r < nranks; ++r) {
              const double x = pat.input(r, i, seed);
              REQUIRE(x == std::floor(x));
              if (op == ReduceOp::kSum) {
                REQUIRE(x >= 1);
                REQUIRE(x <= bound);
              } else {
                REQUIRE(std::abs(x) <= bound);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("verify: the expected result varies with the index, the segment and the seed",
          "[verify]") {
  // The old pattern (period 4 in the index and the rank) gave 10 everywhere for p = 4.
  constexpr std::size_t kL = ibscope::collectives::VerifiablePattern::kTableLength;
  for (DataType t : ibscope::kAllDataTypes) {
    for (ReduceOp op : ibscope::kAllReduceOps) {
      for (int nranks : {2, 4, 8, 12, 16}) {
        INFO(label(t, op) << " nranks=" << nranks);
        const ibscope::collectives::VerifiablePattern pat(t, op, nranks);
        std::vector<double> first;
        for (std::size_t i = 0; i < 256; ++i) first.push_back(pat.expected(i));
        std::vector<double> distinct = first;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        REQUIRE(distinct.size() >= 8);
        // Not periodic with the table's length, and another seed gives other values.
        std::size_t same_next_segment = 0, same_other_seed = 0;
        for (std::size_t i = 0; i < first.size(); ++i) {
          same_next_segment += pat.expected(i + kL) == first[i] ? 1 : 0;
          same_other_seed += pat.expected(i, 1) == first[i] ? 1 : 0;
        }
        CHECK(same_next_segment < first.size() / 2);
        CHECK(same_other_seed < first.size() / 2);
      }
    }
  }
}

TEST_CASE("verify: host all-reduce in two orders verifies for every type and op", "[verify]") {
  const std::size_t count = 1000;  // crosses the 256-element blocks of the 16-bit path
  for (DataType t : ibscope::kAllDataTypes) {
    for (ReduceOp op : ibscope::kAllReduceOps) {
      for (int nranks : kRankCounts) {
        INFO(label(t, op) << " nranks=" << nranks);
        const ibscope::collectives::VerifiablePattern pat(t, op, nranks);
        std::vector<Bytes> inputs;
        constexpr std::uint64_t kSeed = 3;
        for (int r = 0; r < nranks; ++r) {
          inputs.push_back(make_buffer(t, count));
          pat.fill_input(r, inputs.back().data(), count, 0, kSeed);
        }
        for (std::size_t i = 0; i < count; i += 37) {
          REQUIRE(load(t, inputs[1 % nranks], i) == pat.input(1 % nranks, i, kSeed));
        }

        // Left to right: ((in0 op in1) op in2) ...
        Bytes left = inputs[0];
        for (int r = 1; r < nranks; ++r) {
          ibscope::reduce(t, op, left.data(), left.data(), inputs[r].data(), count);
        }
        // Ring-like: segment s starts at rank s and each next rank reduces its own input with
        // the incoming partial result, as reduce-scatter does.
        Bytes ring = make_buffer(t, count);
        const std::size_t es = ibscope::size_of(t);
        for (int s = 0; s < nranks; ++s) {
          const auto seg = ibscope::collectives::pattern::ring_segment(count, nranks, s);
          std::byte* acc = ring.data() + seg.offset * es;
          std::memcpy(acc, inputs[s].data() + seg.offset * es, seg.count * es);
          for (int k = 1; k < nranks; ++k) {
            const Bytes& own = inputs[(s + k) % nranks];
            ibscope::reduce(t, op, acc, own.data() + seg.offset * es, acc, seg.count);
          }
        }

        REQUIRE(pat.count_wrong(left.data(), count, 0, kSeed) == 0);
        REQUIRE(pat.count_wrong(ring.data(), count, 0, kSeed) == 0);
        for (std::size_t i = 0; i < count; ++i) {
          const double want = pat.expected(i, kSeed);
          if (load(t, left, i) != want || load(t, ring, i) != want) {
            FAIL("element " << i << ": left " << load(t, left, i) << ", ring " << load(t, ring, i)
                            << ", expected " << want);
          }
        }

        // One wrong element anywhere is counted once.
        for (std::size_t victim : {std::size_t{0}, count / 2, count - 1}) {
          Bytes bad = left;
          bad[victim * es] ^= std::byte{1};
          REQUIRE(pat.count_wrong(bad.data(), count, 0, kSeed) == 1);
        }
        // A shorter count checks only what it is given.
        REQUIRE(pat.count_wrong(left.data(), count - 1, 0, kSeed) == 0);
        REQUIRE(pat.count_wrong(left.data(), 0, 0, kSeed) == 0);

        Bytes poison = make_buffer(t, count);
        pat.fill_poison(poison.data(), count);
        REQUIRE(pat.count_wrong(poison.data(), count, 0, kSeed) == count);
      }
    }
  }
}

TEST_CASE("verify: fill_input and fill_poison write exactly count elements", "[verify]") {
  for (DataType t : ibscope::kAllDataTypes) {
    INFO(ibscope::name_of(t));
    const std::size_t es = ibscope::size_of(t);
    const ibscope::collectives::VerifiablePattern pat(t, ReduceOp::kSum, 4);
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{63}}) {
      Bytes buf((count + 4) * es, std::byte{0x5a});
      pat.fill_input(2, buf.data(), count);
      for (std::size_t b = count * es; b < buf.size(); ++b) REQUIRE(buf[b] == std::byte{0x5a});
      pat.fill_poison(buf.data(), count);
      for (std::size_t b = count * es; b < buf.size(); ++b) REQUIRE(buf[b] == std::byte{0x5a});
      REQUIRE(pat.count_wrong(buf.data(), count) == count);
    }
  }
}

TEST_CASE("half: every finite half survives half -> float -> half", "[verify][half]") {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = ibscope::half_to_float(h);
    if ((h & 0x7c00u) == 0x7c00u) {
      if ((h & 0x3ffu) == 0) {
        REQUIRE(std::isinf(f));
        REQUIRE(ibscope::float_to_half(f) == h);
      } else {
        REQUIRE(std::isnan(f));
        REQUIRE(is_half_nan(ibscope::float_to_half(f)));
      }
      continue;
    }
    if (ibscope::float_to_half(f) != h) FAIL("half 0x" << std::hex << bits << " changed");
    REQUIRE(std::signbit(f) == ((h & 0x8000u) != 0));
  }
}

TEST_CASE("half: known values", "[verify][half]") {
  CHECK(ibscope::half_to_float(0x3c00) == 1.0f);
  CHECK(ibscope::half_to_float(0xc000) == -2.0f);
  CHECK(ibscope::half_to_float(0x7bff) == 65504.0f);
  CHECK(ibscope::half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(ibscope::half_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(ibscope::half_to_float(0x0400) == std::ldexp(1.0f, -14));
  CHECK(std::signbit(ibscope::half_to_float(0x8000)));

  CHECK(ibscope::float_to_half(1.0f) == 0x3c00);
  CHECK(ibscope::float_to_half(-2.0f) == 0xc000);
  CHECK(ibscope::float_to_half(0.0f) == 0x0000);
  CHECK(ibscope::float_to_half(-0.0f) == 0x8000);
  CHECK(ibscope::float_to_half(65504.0f) == 0x7bff);
  CHECK(ibscope::float_to_half(65519.0f) == 0x7bff);
  CHECK(ibscope::float_to_half(65520.0f) == 0x7c00);  // halfway to 2^16: ties to even -> inf
  CHECK(ibscope::float_to_half(-65520.0f) == 0xfc00);
  CHECK(ibscope::float_to_half(1e10f) == 0x7c00);
  CHECK(ibscope::float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(ibscope::float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(ibscope::float_to_half(1.0f / 3.0f) == 0x3555);
  CHECK(ibscope::float_to_half(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(ibscope::float_to_half(std::ldexp(1.0f, -25)) == 0x0000);  // tie -> even (0)
  CHECK(ibscope::float_to_half(-std::ldexp(1.0f, -25)) == 0x8000);
  CHECK(ibscope::float_to_half(std::ldexp(3.0f, -25)) == 0x0002);  // tie -> even (2)
  CHECK(ibscope::float_to_half(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(ibscope::float_to_half(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(ibscope::float_to_half(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(ibscope::float_to_half(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  // Just below the smallest normal rounds up into it.
  CHECK(ibscope::float_to_half(std::nextafter(std::ldexp(1.0f, -14), 0.0f)) == 0x0400);
  CHECK(ibscope::float_to_half(2049.0f) == 0x6800);  // 2048: tie -> even
  CHECK(ibscope::float_to_half(2051.0f) == 0x6802);  // 2052: tie -> even
}

TEST_CASE("half: midpoints between neighbours round to even", "[verify][half]") {
  // Every pair of adjacent positive finite halves (and their negatives), plus the last step
  // from 65504 towards infinity.
  for (std::uint32_t lo = 0; lo < 0x7c00u; ++lo) {
    const double a = ibscope::half_to_float(static_cast<std::uint16_t>(lo));
    const double b = lo + 1 < 0x7c00u ? ibscope::half_to_float(static_cast<std::uint16_t>(lo + 1))
                                      : 65536.0;       // where the next half would be
    const auto mid = static_cast<float>((a + b) / 2);  // exact: 12 significant bits
    REQUIRE(static_cast<double>(mid) == (a + b) / 2);
    const auto even = static_cast<std::uint16_t>((lo & 1u) == 0 ? lo : lo + 1);
    const auto up = static_cast<std::uint16_t>(lo + 1);
    const auto down = static_cast<std::uint16_t>(lo);
    if (ibscope::float_to_half(mid) != even ||
        ibscope::float_to_half(std::nextafter(mid, 1e30f)) != up ||
        ibscope::float_to_half(std::nextafter(mid, 0.0f)) != down ||
        ibscope::float_to_half(-mid) != (even | 0x8000u) ||
        ibscope::float_to_half(-std::nextafter(mid, 1e30f)) != (up | 0x8000u)) {
      FAIL("wrong rounding between halves 0x" << std::hex << lo << " and 0x" << lo + 1);
    }
  }
}

TEST_CASE("half and bfloat16: NaN stays NaN", "[verify][half][bf16]") {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  for (float nan : {qnan, -qnan, float_from_bits(0x7f800001u), float_from_bits(0xff800001u),
                    float_from_bits(0x7fa00000u), float_from_bits(0x7f80ffffu)}) {
    INFO("bits 0x" << std::hex << std::bit_cast<std::uint32_t>(nan));
    const std::uint16_t h = ibscope::float_to_half(nan);
    CHECK(is_half_nan(h));
    CHECK(std::isnan(ibscope::half_to_float(h)));
    const std::uint16_t b = ibscope::float_to_bf16(nan);
    CHECK(is_bf16_nan(b));
    CHECK(std::isnan(ibscope::bf16_to_float(b)));
    CHECK(((h & 0x8000u) != 0) == std::signbit(nan));
    CHECK(((b & 0x8000u) != 0) == std::signbit(nan));
  }
}

TEST_CASE("bfloat16: every finite bfloat16 survives and midpoints round to even",
          "[verify][bf16]") {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const float f = ibscope::bf16_to_float(b);
    REQUIRE(std::bit_cast<std::uint32_t>(f) == bits << 16);
    if ((b & 0x7f80u) == 0x7f80u) {
      if ((b & 0x7fu) != 0)
        REQUIRE(is_bf16_nan(ibscope::float_to_bf16(f)));
      else
        REQUIRE(ibscope::float_to_bf16(f) == b);
      continue;
    }
    if (ibscope::float_to_bf16(f) != b) FAIL("bf16 0x" << std::hex << bits << " changed");
    // The float halfway to the next bfloat16 has only bit 15 set below the bf16 bits.
    const std::uint32_t mid = (bits << 16) | 0x8000u;
    const auto even = static_cast<std::uint16_t>((bits & 1u) == 0 ? bits : bits + 1);
    if (ibscope::float_to_bf16(float_from_bits(mid)) != even ||
        ibscope::float_to_bf16(float_from_bits(mid + 1)) != static_cast<std::uint16_t>(bits + 1) ||
        ibscope::float_to_bf16(float_from_bits(mid - 1)) != b) {
      FAIL("wrong rounding above bf16 0x" << std::hex << bits);
    }
  }
}

TEST_CASE("bfloat16: known values", "[verify][bf16]") {
  CHECK(ibscope::float_to_bf16(1.0f) == 0x3f80);
  CHECK(ibscope::float_to_bf16(-2.0f) == 0xc000);
  CHECK(ibscope::float_to_bf16(0.0f) == 0x0000);
  CHECK(ibscope::float_to_bf16(-0.0f) == 0x8000);
  CHECK(ibscope::float_to_bf16(1.0f / 3.0f) == 0x3eab);
  CHECK(ibscope::float_to_bf16(3.14159265f) == 0x4049);
  CHECK(ibscope::float_to_bf16(256.0f) == 0x4380);
  CHECK(ibscope::float_to_bf16(257.0f) == 0x4380);                             // tie -> even (256)
  CHECK(ibscope::float_to_bf16(259.0f) == 0x4382);                             // tie -> even (260)
  CHECK(ibscope::float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds to inf
  CHECK(ibscope::float_to_bf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(ibscope::float_to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(ibscope::bf16_to_float(0x3f80) == 1.0f);
  CHECK(ibscope::bf16_to_float(0x4049) == 3.140625f);
  CHECK(ibscope::bf16_to_float(0x0001) == float_from_bits(0x00010000u));  // subnormal
}

TEST_CASE("reduce: in place on a or b equals out of place across 16-bit block boundaries",
          "[verify][reduce]") {
  for (DataType t : ibscope::kAllDataTypes) {
    for (ReduceOp op : ibscope::kAllReduceOps) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256},
                                std::size_t{257}, std::size_t{1000}}) {
        INFO(label(t, op) << " count=" << count);
        const std::size_t es = ibscope::size_of(t);
        constexpr std::size_t kGuard = 8;  // elements past the end that must stay untouched
        Bytes a = make_buffer(t, count + kGuard), b = make_buffer(t, count + kGuard);
        // Values vary with the index (periods 251 and 241, coprime with the 256-element block
        // of the 16-bit path), so a misplaced element is visible. |a op b| <= 245 stays exact
        // even in bfloat16.
        for (std::size_t i = 0; i < count + kGuard; ++i) {
          store(t, a, i, static_cast<double>((i * 7) % 251) - 125);
          store(t, b, i, static_cast<double>((i * 13) % 241) - 120);
        }
        Bytes out = make_buffer(t, count + kGuard);
        std::fill(out.begin(), out.end(), std::byte{0x77});
        ibscope::reduce(t, op, out.data(), a.data(), b.data(), count);
        for (std::size_t i = 0; i < count; ++i) {
          const double want = apply(op, load(t, a, i), load(t, b, i));
          if (load(t, out, i) != want) {
            FAIL("element " << i << ": got " << load(t, out, i) << ", want " << want);
          }
        }
        for (std::size_t byte = count * es; byte < out.size(); ++byte) {
          REQUIRE(out[byte] == std::byte{0x77});
        }

        Bytes on_a = a;
        ibscope::reduce(t, op, on_a.data(), on_a.data(), b.data(), count);
        REQUIRE(std::equal(on_a.begin(), on_a.begin() + static_cast<std::ptrdiff_t>(count * es),
                           out.begin()));
        REQUIRE(std::equal(on_a.begin() + static_cast<std::ptrdiff_t>(count * es), on_a.end(),
                           a.begin() + static_cast<std::ptrdiff_t>(count * es)));
        Bytes on_b = b;
        ibscope::reduce(t, op, on_b.data(), a.data(), on_b.data(), count);
        REQUIRE(std::equal(on_b.begin(), on_b.begin() + static_cast<std::ptrdiff_t>(count * es),
                           out.begin()));

        // dst == a == b: x op x.
        Bytes self = a;
        ibscope::reduce(t, op, self.data(), self.data(), self.data(), count);
        for (std::size_t i = 0; i < count; ++i) {
          const double x = load(t, a, i);
          REQUIRE(load(t, self, i) == apply(op, x, x));
        }
      }
    }
  }
}

TEST_CASE("reduce: 16-bit types round once per step", "[verify][reduce]") {
  auto half_sum = [](float x, float y) {
    const std::uint16_t a = ibscope::float_to_half(x), b = ibscope::float_to_half(y);
    std::uint16_t d = 0;
    ibscope::reduce(DataType::kFloat16, ReduceOp::kSum, &d, &a, &b, 1);
    return ibscope::half_to_float(d);
  };
  CHECK(half_sum(2048, 1) == 2048);
  CHECK(half_sum(2048, 3) == 2052);
  CHECK(half_sum(65504, 65504) == std::numeric_limits<float>::infinity());
  auto bf16_sum = [](float x, float y) {
    const std::uint16_t a = ibscope::float_to_bf16(x), b = ibscope::float_to_bf16(y);
    std::uint16_t d = 0;
    ibscope::reduce(DataType::kBFloat16, ReduceOp::kSum, &d, &a, &b, 1);
    return ibscope::bf16_to_float(d);
  };
  CHECK(bf16_sum(256, 1) == 256);
  CHECK(bf16_sum(256, 3) == 260);
  CHECK(bf16_sum(1, 2) == 3);
}

TEST_CASE("reduce: integer sums wrap around", "[verify][reduce]") {
  {
    const std::int32_t a[] = {std::numeric_limits<std::int32_t>::max(),
                              std::numeric_limits<std::int32_t>::min(), -1, 5};
    const std::int32_t b[] = {1, -1, std::numeric_limits<std::int32_t>::min(), -7};
    std::int32_t d[4] = {};
    ibscope::reduce(DataType::kInt32, ReduceOp::kSum, d, a, b, 4);
    CHECK(d[0] == std::numeric_limits<std::int32_t>::min());
    CHECK(d[1] == std::numeric_limits<std::int32_t>::max());
    CHECK(d[2] == std::numeric_limits<std::int32_t>::max());
    CHECK(d[3] == -2);
    ibscope::reduce(DataType::kInt32, ReduceOp::kMin, d, a, b, 4);
    CHECK(d[0] == 1);
    CHECK(d[1] == std::numeric_limits<std::int32_t>::min());
    CHECK(d[2] == std::numeric_limits<std::int32_t>::min());
    ibscope::reduce(DataType::kInt32, ReduceOp::kMax, d, a, b, 4);
    CHECK(d[0] == std::numeric_limits<std::int32_t>::max());
    CHECK(d[3] == 5);
  }
  {
    const std::int64_t a[] = {std::numeric_limits<std::int64_t>::max(),
                              std::numeric_limits<std::int64_t>::min()};
    const std::int64_t b[] = {1, -1};
    std::int64_t d[2] = {};
    ibscope::reduce(DataType::kInt64, ReduceOp::kSum, d, a, b, 2);
    CHECK(d[0] == std::numeric_limits<std::int64_t>::min());
    CHECK(d[1] == std::numeric_limits<std::int64_t>::max());
  }
  {
    // Repeated in-place sums (what timed iterations do) keep wrapping without trapping.
    std::vector<std::int32_t> x(300, std::numeric_limits<std::int32_t>::max() / 3);
    for (int iter = 0; iter < 10; ++iter) {
      ibscope::reduce(DataType::kInt32, ReduceOp::kSum, x.data(), x.data(), x.data(), x.size());
    }
    std::uint32_t want = std::numeric_limits<std::int32_t>::max() / 3;
    for (int iter = 0; iter < 10; ++iter) want *= 2;
    CHECK(x[0] == static_cast<std::int32_t>(want));
    CHECK(x[299] == x[0]);
  }
}

TEST_CASE("reduce: count 0 touches nothing", "[verify][reduce]") {
  for (DataType t : ibscope::kAllDataTypes) {
    for (ReduceOp op : ibscope::kAllReduceOps) {
      Bytes a(16, std::byte{1}), b(16, std::byte{2}), d(16, std::byte{3});
      ibscope::reduce(t, op, d.data(), a.data(), b.data(), 0);
      CHECK(d == Bytes(16, std::byte{3}));
    }
  }
}
