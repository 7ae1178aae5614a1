// Robust statistics of repeated runs (measure/robust_stats.hpp), checked against figures worked
// out by hand.

#include <catch2/catch.hpp>
#include <vector>

#include "ibscope/measure/robust_stats.hpp"

using ibscope::measure::robust_stats;

TEST_CASE("robust_stats: median, MAD and quartiles of five runs", "[stats][baseline]") {
  // Sorted 46, 47, 47.5, 48, 60: median 47.5; |x - 47.5| = 1.5, 0.5, 0, 0.5, 12.5 -> MAD 0.5.
  const std::vector<double> v{48, 46, 60, 47, 47.5};
  const auto s = robust_stats(v);
  CHECK(s.n == 5);
  CHECK(s.median == Approx(47.5));
  CHECK(s.mad == Approx(0.5));
  CHECK(s.spread == Approx(1.4826 * 0.5));
  CHECK(s.p25 == Approx(47));
  CHECK(s.p75 == Approx(48));
  CHECK(s.min == 46);
  CHECK(s.max == 60);
  CHECK(s.spread_pct() == Approx(100 * 1.4826 * 0.5 / 47.5));
}

TEST_CASE("robust_stats: one wild run moves neither the median nor the spread much",
          "[stats][baseline]") {
  const auto calm = robust_stats(std::vector<double>{10, 10.1, 9.9, 10.05, 9.95});
  const auto wild = robust_stats(std::vector<double>{10, 10.1, 9.9, 10.05, 1.0});
  CHECK(calm.median == Approx(10));
  CHECK(wild.median == Approx(9.95 + 0.05));
  CHECK(wild.mad <= 0.1 + 1e-12);
}

TEST_CASE("robust_stats: even counts interpolate, empty and single inputs", "[stats][baseline]") {
  const auto even = robust_stats(std::vector<double>{1, 2, 3, 4});
  CHECK(even.median == Approx(2.5));
  CHECK(even.mad == Approx(1.0));  // deviations 1.5, 0.5, 0.5, 1.5
  const auto none = robust_stats(std::vector<double>{});
  CHECK(none.n == 0);
  CHECK(none.median == 0);
  CHECK(none.spread_pct() == 0);
  const auto one = robust_stats(std::vector<double>{7});
  CHECK(one.n == 1);
  CHECK(one.median == 7);
  CHECK(one.mad == 0);
}
