// Stalls in a measurement's samples, and clock offsets from ping-pong samples (pure).
#include <catch2/catch.hpp>
#include <cmath>

#include "ibscope/measure/clock_sync.hpp"
#include "ibscope/measure/stall.hpp"

using namespace ibscope;

TEST_CASE("stall: an outage in a steady loop is found, noise is not", "[stall]") {
  std::vector<double> samples(100, 10'000);  // 10 ms iterations
  samples[37] = 2'400'000;                   // a 2.4 s outage
  samples[50] = 60'000;                      // 6x: noise, not a stall (under 250 ms excess)
  const auto stalls = measure::find_stalls(samples);
  REQUIRE(stalls.size() == 1);
  CHECK(stalls[0].iteration == 37);
  CHECK(stalls[0].time_us == 2'400'000);
  CHECK(stalls[0].median_us == 10'000);
}

TEST_CASE("stall: microsecond loops need both the factor and the absolute excess", "[stall]") {
  std::vector<double> samples(1000, 5);  // 5 us ping-pongs
  samples[3] = 500;                      // 100x but only 0.5 ms: a scheduling hiccup
  CHECK(measure::find_stalls(samples).empty());
  samples[4] = 300'000;  // 0.3 s: the link went away
  REQUIRE(measure::find_stalls(samples).size() == 1);
  // A slow loop (1 s per iteration) with one 1.5x iteration: not a stall (factor 10).
  std::vector<double> slow(20, 1e6);
  slow[5] = 1.5e6;
  CHECK(measure::find_stalls(slow).empty());
  CHECK(measure::find_stalls({}).empty());
}

TEST_CASE("clock offset: the sample with the shortest round trip wins", "[clock]") {
  // Peer clock = rank 0 clock + 100 s. Sample 1: symmetric 10 us trip. Sample 2: a slow
  // answer (asymmetric), larger round trip: must not be used.
  const std::vector<measure::ClockSample> samples = {
      {1.000000, 101.000005, 1.000010},
      {2.000000, 102.000900, 2.001000},
  };
  const measure::ClockOffset o = measure::estimate_offset(samples);
  CHECK(o.offset_s == Approx(100.0).margin(1e-9));
  CHECK(o.uncertainty_s == Approx(5e-6).margin(1e-12));
  const measure::ClockOffset none = measure::estimate_offset({});
  CHECK(std::isinf(none.uncertainty_s));
  CHECK(none.offset_s == 0);
}
