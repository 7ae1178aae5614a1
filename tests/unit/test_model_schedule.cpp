// Megatron-LM's interleaved 1F1B schedule as the data-parallel overlap sees it
// (model/interleaved_schedule.hpp): windows per chunk and exposed calls, by hand.

#include <catch2/catch.hpp>
#include <vector>

#include "ibscope/model/interleaved_schedule.hpp"
#include "ibscope/model/step_model.hpp"

using namespace ibscope::model;

namespace {

// p 4 stages, v 2 chunks, m 8 micro-batches; backward unit 1 s, forward 0.5 s, 5 s of idle
// in the first stage's cool-down.
ChunkSchedule four_by_two() {
  ChunkSchedule s;
  s.stages = 4;
  s.chunks = 2;
  s.microbatches = 8;
  s.forward_unit_s = 0.5;
  s.backward_unit_s = 1;
  s.cooldown_idle_s = 5;
  return s;
}

}  // namespace

TEST_CASE("interleaved schedule: cool-down units and windows per chunk", "[schedule]") {
  ChunkSchedule s = four_by_two();
  // Megatron's warm-up of rank 0: 2 (p-1) + (v-1) p = 6 + 4 = 10 < m v = 16.
  CHECK(cooldown_units(s) == 10);
  // Chunk 1's last backward is followed by p = 4 units of chunk 0, each 1 s plus 5/10 s of
  // idle: 6 s. Chunk 0 ends the backward pass: 0 s.
  CHECK(reduce_window_s(s, 1) == Approx(6));
  CHECK(reduce_window_s(s, 0) == 0);
  // Chunk 1's first forward of the next step follows 4 forward units of chunk 0: 2 s.
  CHECK(gather_window_s(s, 1) == Approx(2));
  CHECK(gather_window_s(s, 0) == 0);
  // Few micro-batches: m v = 4 x 2 = 8 < 10 units.
  s.microbatches = 4;
  CHECK(cooldown_units(s) == 8);
  CHECK(reduce_window_s(s, 1) == Approx(4 + 4 * 5.0 / 8));
  // One stage, one chunk: no warm-up, one unit.
  s.stages = 1;
  s.chunks = 1;
  CHECK(cooldown_units(s) == 1);
}

TEST_CASE("interleaved schedule: reduction calls per chunk and what is exposed", "[schedule]") {
  const ChunkSchedule s = four_by_two();
  const std::vector<std::vector<double>> buckets = {{1, 1}, {1, 1}};
  const std::vector<TimedCall> calls = reduce_calls(s, buckets);
  // Chunk 1 first: its last unit ends at -6, buckets ready at -6.5 and -6; chunk 0's at -0.5
  // and 0.
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].at_s == Approx(-6.5));
  CHECK(calls[1].at_s == Approx(-6));
  CHECK(calls[2].at_s == Approx(-0.5));
  CHECK(calls[3].at_s == Approx(0));
  // Serial: ends -5.5, -4.5, 0.5, 1.5 -> 1.5 s after the backward pass. The old rule (all
  // four in the last micro-batch's 2 s backward: ready 0.5 .. 2, window 2) would expose 2.5.
  CHECK(exposed_after_ready(calls) == Approx(1.5));
  CHECK(exposed_after(std::vector<double>{1, 1, 1, 1}, 2) == Approx(2.5));
  // Half the links' speed while the backward goes on: -6.5 .. -4.5, -4.5 .. -2.5; the third
  // does 0.25 s of work by 0 and the rest alone, to 0.75; the fourth 0.75 .. 1.75.
  CHECK(exposed_after_ready(calls, 0.5) == Approx(1.75));
}

TEST_CASE("interleaved schedule: parameter gathers due per chunk", "[schedule]") {
  const ChunkSchedule s = four_by_two();
  const std::vector<std::vector<double>> buckets = {{1, 1}, {1, 1}};
  const std::vector<TimedCall> calls = gather_calls(s, buckets);
  // Chunk 0's buckets due at 0 and 0.25 (half of its 0.5 s forward unit), chunk 1's at 2 and
  // 2.25.
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].at_s == 0);
  CHECK(calls[1].at_s == Approx(0.25));
  CHECK(calls[2].at_s == Approx(2));
  CHECK(calls[3].at_s == Approx(2.25));
  // Issued at 0 one after another: ends 1, 2, 3, 4; late by 1, 1.75, 1, 1.75 -> 1.75.
  CHECK(exposed_before_due(calls) == Approx(1.75));
  // Half speed once the forward runs (from the delay D): the first ends at 1 <= D; the second
  // runs alone from 1 to D, so for D in [2, 3] it ends at 2, the third ends at
  // D + 2 (3 - D) = 6 - D <= D + 2 and the fourth at 8 - D <= D + 2.25: D = 2.875.
  CHECK(exposed_before_due(calls, 0.5) == Approx(2.875).epsilon(1e-9));
}

TEST_CASE("interleaved schedule: one chunk gives the one-micro-batch rule", "[schedule]") {
  ChunkSchedule s;
  s.stages = 2;
  s.microbatches = 4;
  s.forward_unit_s = 6;
  s.backward_unit_s = 6;
  s.cooldown_idle_s = 100;  // no unit follows chunk 0: idle plays no part
  const std::vector<std::vector<double>> big = {{3, 3, 3}};
  // Ready at -4, -2, 0: ends -1, 2, 5. Due at 0, 2, 4: ends 3, 6, 9, delay 5.
  CHECK(exposed_after_ready(reduce_calls(s, big)) == Approx(5));
  CHECK(exposed_after_ready(reduce_calls(s, big)) == Approx(exposed_after(big[0], 6)));
  CHECK(exposed_before_due(gather_calls(s, big)) == Approx(5));
  CHECK(exposed_before_due(gather_calls(s, big)) == Approx(exposed_before(big[0], 6)));
  CHECK(exposed_after_ready({}) == 0);
  CHECK(exposed_before_due({}) == 0);
}
