// Sample statistics (exact values) and nccl-tests style message-size sweeps.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/measure/sweep.hpp"

using ibscope::measure::Stats;
using ibscope::measure::SweepSpec;

namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

Approx exact(double x) { return Approx(x).epsilon(1e-12).margin(1e-12); }

}  // namespace

TEST_CASE("stats: samples 1..100", "[stats]") {
  std::vector<double> v = one_to(100);
  // Order must not matter.
  std::shuffle(v.begin(), v.end(), std::mt19937(42));
  const Stats s = ibscope::measure::summarize(v);
  CHECK(s.n == 100);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(s.p50 == exact(50.5));
  CHECK(s.p99 == exact(99.01));
  CHECK(s.mean == exact(50.5));
  // Sample variance of 1..n is n(n+1)/12.
  CHECK(s.sd == exact(std::sqrt(100.0 * 101.0 / 12.0)));
  CHECK(s.sd == exact(29.011491975882016));
}

TEST_CASE("stats: a single sample", "[stats]") {
  const std::vector<double> v{3.25};
  const Stats s = ibscope::measure::summarize(v);
  CHECK(s.n == 1);
  CHECK(s.min == 3.25);
  CHECK(s.max == 3.25);
  CHECK(s.p50 == 3.25);
  CHECK(s.p99 == 3.25);
  CHECK(s.mean == 3.25);
  CHECK(s.sd == 0);
}

TEST_CASE("stats: empty input is all zeros", "[stats]") {
  const Stats s = ibscope::measure::summarize({});
  CHECK(s.n == 0);
  CHECK(s.min == 0);
  CHECK(s.max == 0);
  CHECK(s.p50 == 0);
  CHECK(s.p99 == 0);
  CHECK(s.mean == 0);
  CHECK(s.sd == 0);
  CHECK(ibscope::measure::percentile_sorted({}, 50) == 0);
}

TEST_CASE("stats: small known sets", "[stats]") {
  {
    const std::vector<double> v{3, 1};
    const Stats s = ibscope::measure::summarize(v);
    CHECK(s.p50 == 2);
    CHECK(s.mean == 2);
    CHECK(s.sd == exact(std::sqrt(2.0)));
    CHECK(s.p99 == exact(2.98));
  }
  {
    const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
    const Stats s = ibscope::measure::summarize(v);
    CHECK(s.mean == 5);
    CHECK(s.sd == exact(std::sqrt(32.0 / 7.0)));
    CHECK(s.p50 == 4.5);
    CHECK(s.min == 2);
    CHECK(s.max == 9);
  }
  {
    // Nearly equal large samples: Welford keeps the spread.
    const std::vector<double> v{1e9 + 1, 1e9 + 2, 1e9 + 3};
    const Stats s = ibscope::measure::summarize(v);
    CHECK(s.mean == exact(1e9 + 2));
    CHECK(s.sd == exact(1.0));
  }
}

TEST_CASE("stats: percentile_sorted is the numpy linear type 7 definition", "[stats]") {
  const std::vector<double> v{1, 2, 3, 4};
  CHECK(ibscope::measure::percentile_sorted(v, 0) == 1);
  CHECK(ibscope::measure::percentile_sorted(v, 25) == exact(1.75));
  CHECK(ibscope::measure::percentile_sorted(v, 50) == exact(2.5));
  CHECK(ibscope::measure::percentile_sorted(v, 75) == exact(3.25));
  CHECK(ibscope::measure::percentile_sorted(v, 100) == 4);
  // Out-of-range q is clamped.
  CHECK(ibscope::measure::percentile_sorted(v, -5) == 1);
  CHECK(ibscope::measure::percentile_sorted(v, 250) == 4);
  const std::vector<double> one{7};
  CHECK(ibscope::measure::percentile_sorted(one, 0) == 7);
  CHECK(ibscope::measure::percentile_sorted(one, 99) == 7);
  CHECK(ibscope::measure::percentile_sorted(one, 100) == 7);
}

TEST_CASE("sweep: -b 8 -e 128M -f 2 gives 25 sizes", "[sweep]") {
  const SweepSpec spec{};  // the defaults are nccl-tests' -b 8 -e 128M -f 2
  for (std::uint64_t element : {1, 2, 4, 8}) {
    const auto sizes = ibscope::measure::sweep_sizes(spec, element);
    REQUIRE(sizes.size() == 25);
    CHECK(sizes.front() == 8);
    CHECK(sizes.back() == (128ULL << 20));
    for (std::size_t i = 1; i < sizes.size(); ++i) REQUIRE(sizes[i] == 2 * sizes[i - 1]);
  }
}

TEST_CASE("sweep: sizes are rounded down to whole elements", "[sweep]") {
  SweepSpec spec;
  spec.min_bytes = 10;
  spec.max_bytes = 100;
  CHECK(ibscope::measure::sweep_sizes(spec, 4) == std::vector<std::uint64_t>{8, 20, 40, 80});
  CHECK(ibscope::measure::sweep_sizes(spec, 1) == std::vector<std::uint64_t>{10, 20, 40, 80});
  // 0 means "bytes, no rounding".
  CHECK(ibscope::measure::sweep_sizes(spec, 0) == std::vector<std::uint64_t>{10, 20, 40, 80});
  spec.min_bytes = 6;
  spec.max_bytes = 6;
  CHECK(ibscope::measure::sweep_sizes(spec, 4) == std::vector<std::uint64_t>{4});
  // Sizes that round to the same element count are measured once: 8, 10, 12.5, 15.6, 19.5,
  // 24.4, 30.5, 38.1, 47.7, 59.6 bytes.
  spec.min_bytes = 8;
  spec.max_bytes = 64;
  spec.factor = 1.25;
  const auto sizes = ibscope::measure::sweep_sizes(spec, 8);
  CHECK(sizes == std::vector<std::uint64_t>{8, 16, 24, 32, 40, 56});
}

TEST_CASE("sweep: every size is a multiple of the element and increasing within range", "[sweep]") {
  for (double factor : {1.1, 1.5, 2.0, 3.0, 10.0}) {
    for (std::uint64_t element : {1, 2, 4, 8}) {
      SweepSpec spec;
      spec.min_bytes = 3;
      spec.max_bytes = 1 << 20;
      spec.factor = factor;
      INFO("factor=" << factor << " element=" << element);
      const auto sizes = ibscope::measure::sweep_sizes(spec, element);
      REQUIRE(!sizes.empty());
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        REQUIRE(sizes[i] % element == 0);
        REQUIRE(sizes[i] <= spec.max_bytes);
        if (i > 0) REQUIRE(sizes[i] > sizes[i - 1]);
      }
    }
  }
}

TEST_CASE("sweep: -i adds a fixed increment", "[sweep]") {
  SweepSpec spec;
  spec.min_bytes = 8;
  spec.max_bytes = 64;
  spec.step_bytes = 8;
  spec.factor = 1;  // ignored with an increment
  CHECK(ibscope::measure::sweep_sizes(spec, 4) ==
        std::vector<std::uint64_t>{8, 16, 24, 32, 40, 48, 56, 64});
  spec.min_bytes = 6;
  spec.max_bytes = 50;
  spec.step_bytes = 10;
  CHECK(ibscope::measure::sweep_sizes(spec, 4) == std::vector<std::uint64_t>{4, 16, 24, 36, 44});
  // The increment need not land on max.
  spec.min_bytes = 100;
  spec.max_bytes = 1000;
  spec.step_bytes = 300;
  CHECK(ibscope::measure::sweep_sizes(spec, 1) == std::vector<std::uint64_t>{100, 400, 700, 1000});
  spec.step_bytes = 1000;
  CHECK(ibscope::measure::sweep_sizes(spec, 1) == std::vector<std::uint64_t>{100});
}

TEST_CASE("sweep: an explicit list is used as given and rounded down", "[sweep]") {
  SweepSpec spec;
  spec.explicit_bytes = {7, 16, 33, 1024};
  spec.min_bytes = 1 << 20;  // range flags are ignored with a list
  spec.max_bytes = 1;
  CHECK(ibscope::measure::sweep_sizes(spec, 4) == std::vector<std::uint64_t>{4, 16, 32, 1024});
  CHECK(ibscope::measure::sweep_sizes(spec, 1) == std::vector<std::uint64_t>{7, 16, 33, 1024});
}

TEST_CASE("sweep: bad ranges are usage errors with a helpful message", "[sweep]") {
  SECTION("inverted range") {
    SweepSpec spec;
    spec.min_bytes = 1024;
    spec.max_bytes = 8;
    CHECK_THROWS_AS(ibscope::measure::sweep_sizes(spec, 4), ibscope::UsageError);
    CHECK_THROWS_WITH(ibscope::measure::sweep_sizes(spec, 4),
                      Catch::Contains("-b") && Catch::Contains("-e") && Catch::Contains("1024") &&
                          Catch::Contains("8"));
  }
  SECTION("factor <= 1 without an increment") {
    for (double factor : {1.0, 0.5, 0.0, -2.0, std::nan("")}) {
      SweepSpec spec;
      spec.factor = factor;
      INFO("factor=" << factor);
      CHECK_THROWS_AS(ibscope::measure::sweep_sizes(spec, 4), ibscope::UsageError);
      CHECK_THROWS_WITH(ibscope::measure::sweep_sizes(spec, 4),
                        Catch::Contains("-f") && Catch::Contains("> 1") && Catch::Contains("-i"));
    }
  }
  SECTION("too many sizes") {
    SweepSpec spec;
    spec.min_bytes = 1;
    spec.max_bytes = 1 << 20;
    spec.step_bytes = 1;
    CHECK_THROWS_AS(ibscope::measure::sweep_sizes(spec, 1), ibscope::UsageError);
    CHECK_THROWS_WITH(ibscope::measure::sweep_sizes(spec, 1),
                      Catch::Contains("10000") && Catch::Contains("-f") && Catch::Contains("-i"));
    spec.step_bytes = 0;
    spec.factor = 1.0001;
    spec.max_bytes = 1ULL << 40;
    CHECK_THROWS_AS(ibscope::measure::sweep_sizes(spec, 1), ibscope::UsageError);
  }
  SECTION("exactly at the limit is fine") {
    SweepSpec spec;
    spec.min_bytes = 1;
    spec.max_bytes = 10000;
    spec.step_bytes = 1;
    CHECK(ibscope::measure::sweep_sizes(spec, 1).size() == 10000);
  }
}

// Found by tests/fuzz (regressions/args/sweep-step-too-small): above 2^53 bytes adding 1 to a
// double changes nothing, so -b 9000T -e 9000T -i 1 looped forever instead of failing.
TEST_CASE("sweep: a step too small to change a huge size is an error, not a hang", "[sweep]") {
  SweepSpec spec;
  spec.min_bytes = 9000ULL << 40;
  spec.max_bytes = 9000ULL << 40;
  spec.step_bytes = 1;
  CHECK_THROWS_AS(ibscope::measure::sweep_sizes(spec, 1), ibscope::UsageError);
  // The same step still works where a double resolves it.
  spec.min_bytes = spec.max_bytes = 1ULL << 40;
  spec.step_bytes = 1;
  CHECK(ibscope::measure::sweep_sizes(spec, 1) == std::vector<std::uint64_t>{1ULL << 40});
}
