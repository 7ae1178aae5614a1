// The time per call as nccl-tests defines it, on synthetic timelines of ranks with known skews
// and delays (measure/time_average.hpp; docs/methodology.md, "Timing").
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/measure/time_average.hpp"
#include "ibscope/measure/timing.hpp"
#include "ibscope/measure/warm_up.hpp"

using namespace ibscope;

namespace {

// One rank's calls on its own clock: entries and exits, microseconds.
struct Timeline {
  std::vector<double> enter_us, exit_us;
};

// What time_loop measures on that timeline: the loop from the first entry to the last exit,
// divided by the calls, and each call's exit - entry (calls run back to back).
measure::LoopTiming measured(const Timeline& t) {
  measure::LoopTiming m;
  for (std::size_t i = 0; i < t.enter_us.size(); ++i) {
    m.samples_s.push_back((t.exit_us[i] - t.enter_us[i]) * 1e-6);
  }
  m.loop_s =
      (t.exit_us.back() - t.enter_us.front()) * 1e-6 / static_cast<double>(t.enter_us.size());
  return m;
}

// A synchronising collective: call i ends for every rank `c_us` after the last rank started it.
// Rank r enters call 0 at skew_us[r] and call i at its exit from call i-1; it then spends
// delay_us[r] before starting the collective itself (IBSCOPE_FAULT_DELAY_RANK's sleep, inside
// the timed call).
std::vector<Timeline> synchronising(const std::vector<double>& skew_us,
                                    const std::vector<double>& delay_us, double c_us, int calls) {
  const std::size_t p = skew_us.size();
  std::vector<Timeline> t(p);
  std::vector<double> enter = skew_us;
  for (int i = 0; i < calls; ++i) {
    double last_start = 0;
    for (std::size_t r = 0; r < p; ++r) last_start = std::max(last_start, enter[r] + delay_us[r]);
    const double end = last_start + c_us;
    for (std::size_t r = 0; r < p; ++r) {
      t[r].enter_us.push_back(enter[r]);
      t[r].exit_us.push_back(end);
      enter[r] = end;
    }
  }
  return t;
}

std::vector<double> loop_times_s(const std::vector<Timeline>& t) {
  std::vector<double> out;
  for (const auto& r : t) out.push_back(measured(r).loop_s);
  return out;
}

}  // namespace

TEST_CASE("time average: nccl-tests' -a modes over three ranks with known skews", "[timing]") {
  // Skews 0, 5, 10 us; rank 2 sleeps 100 us before every call; the collective takes 20 us after
  // the last arrival. Call 0 ends at max(0, 5, 10 + 100) + 20 = 130 us, every later call 120 us
  // after the one before: call 9 ends at 130 + 9 x 120 = 1210 us. Loop times: (1210 - skew) / 10
  // = 121.0, 120.5, 120.0 us.
  const auto t = synchronising({0, 5, 10}, {0, 0, 100}, 20, 10);
  const auto loops = loop_times_s(t);
  REQUIRE(loops.size() == 3);
  CHECK(loops[0] * 1e6 == Approx(121.0));
  CHECK(loops[1] * 1e6 == Approx(120.5));
  CHECK(loops[2] * 1e6 == Approx(120.0));
  CHECK(measure::combine_loop_times(loops, measure::TimeAverage::kMean) * 1e6 == Approx(120.5));
  CHECK(measure::combine_loop_times(loops, measure::TimeAverage::kRank0) * 1e6 == Approx(121.0));
  CHECK(measure::combine_loop_times(loops, measure::TimeAverage::kMin) * 1e6 == Approx(120.0));
  CHECK(measure::combine_loop_times(loops, measure::TimeAverage::kMax) * 1e6 == Approx(121.0));
  // The distribution is the slowest loop's rank's own calls: rank 0, whose first call waited
  // 130 us for the late rank, every other 120 us.
  CHECK(measure::slowest_rank(loops) == 0);
  const auto samples = measured(t[0]).samples_s;
  std::vector<double> us;
  for (double s : samples) us.push_back(s * 1e6);
  const measure::Stats st = measure::summarize(us);
  CHECK(st.n == 10);
  CHECK(st.max == Approx(130));
  CHECK(st.p50 == Approx(120));
  CHECK(st.min == Approx(120));
}

TEST_CASE("time average: a delayed rank raises the average by its delay", "[timing]") {
  // Four ranks, no skew, a 50 us collective; rank 1 sleeping D before every call adds D to every
  // call of every rank, so the average time per call grows by exactly D.
  const auto base = loop_times_s(synchronising({0, 0, 0, 0}, {0, 0, 0, 0}, 50, 20));
  const auto late = loop_times_s(synchronising({0, 0, 0, 0}, {0, 300, 0, 0}, 50, 20));
  CHECK(measure::combine_loop_times(base, measure::TimeAverage::kMean) * 1e6 == Approx(50));
  CHECK(measure::combine_loop_times(late, measure::TimeAverage::kMean) * 1e6 == Approx(350));
  CHECK(measure::combine_loop_times(late, measure::TimeAverage::kMin) * 1e6 == Approx(350));
}

TEST_CASE("time average: per-call maxima over ranks overstate a jittery loop", "[timing]") {
  // Two ranks, calls every 100 us; rank 1 leaves each call 0 or 30 us after rank 0 in turn (a
  // ring's last step ends at different moments on different ranks). Both loops take 100 us per
  // call, which nccl-tests reports; the mean over calls of the slower rank's call, ibscope's
  // time before schema version 2, says 115 us.
  const int calls = 10;
  Timeline r0, r1;
  double e0 = 0, e1 = 0;
  for (int i = 0; i < calls; ++i) {
    const double end = 100.0 * (i + 1);
    r0.enter_us.push_back(e0);
    r0.exit_us.push_back(end);
    e0 = end;
    r1.enter_us.push_back(e1);
    const double x1 = end + (i % 2 == 0 ? 30 : 0);
    r1.exit_us.push_back(x1);
    e1 = x1;
  }
  const measure::LoopTiming m0 = measured(r0), m1 = measured(r1);
  const std::vector<double> loops{m0.loop_s, m1.loop_s};
  CHECK(measure::combine_loop_times(loops, measure::TimeAverage::kMean) * 1e6 ==
        Approx(100).margin(3));
  double old_sum_us = 0;
  for (int i = 0; i < calls; ++i) {
    old_sum_us += std::max(m0.samples_s[static_cast<std::size_t>(i)],
                           m1.samples_s[static_cast<std::size_t>(i)]) *
                  1e6;
  }
  CHECK(old_sum_us / calls == Approx(115));
}

TEST_CASE("time average: names and nccl-tests' numbers parse, anything else is a usage error",
          "[timing]") {
  CHECK(measure::parse_time_average("0", "-a") == measure::TimeAverage::kRank0);
  CHECK(measure::parse_time_average("1", "-a") == measure::TimeAverage::kMean);
  CHECK(measure::parse_time_average("avg", "-a") == measure::TimeAverage::kMean);
  CHECK(measure::parse_time_average("2", "-a") == measure::TimeAverage::kMin);
  CHECK(measure::parse_time_average("max", "-a") == measure::TimeAverage::kMax);
  CHECK(name_of(measure::TimeAverage::kRank0) == "rank0");
  CHECK_THROWS_AS(measure::parse_time_average("4", "-a"), UsageError);
  CHECK_THROWS_WITH(measure::parse_time_average("mean", "-a/--average"),
                    Catch::Contains("-a/--average 'mean'") && Catch::Contains("nccl-tests"));
  CHECK_THROWS_AS(measure::combine_loop_times({}, measure::TimeAverage::kMean),
                  std::invalid_argument);
  CHECK(measure::slowest_rank({}) == 0);
  const std::vector<double> tie{2, 3, 3};
  CHECK(measure::slowest_rank(tie) == 1);
}

TEST_CASE("time loop: one interval around the loop, one around each call", "[timing]") {
  int calls = 0;
  const measure::LoopTiming t = measure::time_loop(2, 5, [&] { ++calls; });
  CHECK(calls == 7);
  REQUIRE(t.samples_s.size() == 5);
  double sum = 0;
  for (double s : t.samples_s) sum += s;
  // Consecutive intervals share their end points, so the samples add up to the loop exactly.
  CHECK(t.loop_s * 5 == Approx(sum).epsilon(1e-9));
}

TEST_CASE("waited-for rank: the most time outside the calls, else the longest loop", "[timing]") {
  // Rank 1 sleeps 2 ms before each call: every loop takes about as long (the others wait for
  // it inside their calls), so the loop times cannot tell; the time outside the calls can.
  const std::vector<double> loops{2.101e-3, 2.100e-3, 2.102e-3};
  CHECK(measure::waited_for_rank(loops, std::vector<double>{1e-7, 2.0e-3, 1e-7}) == 1);
  CHECK(measure::waited_for_rank(loops, std::vector<double>{2.0e-3, 0, 0}) == 0);
  CHECK(measure::waited_for_rank(loops, std::vector<double>{0, 0, 2.0e-3}) == 2);
  // Back to back (no time outside any call): the longest loop, the last to finish.
  CHECK(measure::waited_for_rank(loops, std::vector<double>{0, 0, 0}) == 2);
  CHECK(measure::waited_for_rank(loops, {}) == 2);
  CHECK(measure::waited_for_rank({}, {}) == 0);
  // Ties: the lowest rank.
  CHECK(measure::waited_for_rank(loops, std::vector<double>{1e-3, 1e-3, 0}) == 0);
}

TEST_CASE("split time loop: the time before each call is outside, the samples cover both",
          "[timing]") {
  int before = 0, calls = 0;
  std::vector<Clock::time_point> arrivals;
  const measure::LoopTiming t = measure::time_loop_split(
      1, 4,
      [&] {
        ++before;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      [&](Clock::time_point arrival) {
        ++calls;
        arrivals.push_back(arrival);
      });
  CHECK(before == 5);
  CHECK(calls == 5);
  REQUIRE(t.samples_s.size() == 4);
  double sum = 0;
  for (double s : t.samples_s) sum += s;
  CHECK(t.loop_s * 4 == Approx(sum).epsilon(1e-9));
  CHECK(t.outside_s >= 2e-3);
  CHECK(t.outside_s <= t.loop_s);
  for (std::size_t i = 1; i < arrivals.size(); ++i) CHECK(arrivals[i] > arrivals[i - 1]);
  CHECK(measure::time_loop(0, 3, [] {}).outside_s == 0);
}

TEST_CASE("warm-up floor: rank 0 asks for the calls that reach the floor, in few rounds",
          "[timing][warmup]") {
  using measure::WarmupRound;
  // The first round (one call) never ends the floor, however long it took: it was cold.
  CHECK(measure::more_warmup_calls(0.002, WarmupRound{0, 1, 0.003, 1}) == 1);
  // 1 call took 10 us: a round of 2 ms is about 200 calls, asked with 10 % more.
  const std::int64_t more = measure::more_warmup_calls(0.002, WarmupRound{0, 1, 10e-6, 1});
  CHECK(more >= 200);
  CHECK(more <= 221);
  // A later round that lasted the floor ends it; one that fell short asks again at its rate.
  CHECK(measure::more_warmup_calls(0.002, WarmupRound{1, 220, 0.0021, 221}) == 0);
  const std::int64_t again = measure::more_warmup_calls(0.002, WarmupRound{1, 220, 0.0011, 221});
  CHECK(again >= 400);
  CHECK(again <= 441);
  // 5 cold calls that filled 2 ms (one stalled) no longer end the floor with the FIFO untouched.
  CHECK(measure::more_warmup_calls(0.002, WarmupRound{0, 5, 0.002, 5}) >= 5);
  // Nothing measured: one call to learn how long a call takes.
  CHECK(measure::more_warmup_calls(0.002, WarmupRound{0, 0, 0, 0}) == 1);
  CHECK(measure::more_warmup_calls(0.002, WarmupRound{1, 3, 0, 4}) == 1);
  // Bounded: the rounds and the calls.
  CHECK(measure::more_warmup_calls(0.002, WarmupRound{measure::kMaxWarmupRounds, 5, 1e-5, 6}) == 0);
  CHECK(measure::more_warmup_calls(10.0, WarmupRound{1, 10, 1e-6, 11}) ==
        measure::kMaxWarmupCalls - 11);
  CHECK(measure::more_warmup_calls(10.0, WarmupRound{1, 10, 1e-3, measure::kMaxWarmupCalls}) == 0);
  // Once warm, a quarter of the floor in calls at the last round's rate, after the last
  // bootstrap round; none where a call is long.
  CHECK(measure::settle_calls(0.002, WarmupRound{2, 1000, 0.002, 1200}) == 250);
  CHECK(measure::settle_calls(0.002, WarmupRound{1, 1, 0.1, 2}) == 0);
  CHECK(measure::settle_calls(0.002, WarmupRound{1, 0, 0, 1}) == 0);
  CHECK(measure::settle_calls(0, WarmupRound{2, 1000, 0.002, 1200}) == 0);
}
