// Straggler attribution from per-rank entry times (pure).
#include <catch2/catch.hpp>

#include "ibscope/accept/straggler.hpp"

using namespace ibscope;
using namespace ibscope::accept;

namespace {

// `ranks` ranks, `iters` iterations of `iter_us`; rank `late` enters `late_us` after the others,
// whose entries jitter by a few microseconds. Rank r's clock runs `r * 1000 s` ahead.
ArrivalRow row(int ranks, int iters, double iter_us, int late, double late_us) {
  ArrivalRow r;
  r.label = "ring 4 MiB";
  r.enter_s.resize(static_cast<std::size_t>(ranks));
  for (int i = 0; i < iters; ++i) {
    const double t0 = 10.0 + i * iter_us * 1e-6;
    for (int k = 0; k < ranks; ++k) {
      const double jitter_us = ((i * 7 + k * 3) % 5);
      const double at = t0 + (k == late ? late_us : jitter_us) * 1e-6;
      r.enter_s[static_cast<std::size_t>(k)].push_back(at + k * 1000.0);
    }
    r.iteration_us.push_back(iter_us);
  }
  return r;
}

std::vector<measure::ClockOffset> offsets(int ranks) {
  std::vector<measure::ClockOffset> o;
  for (int k = 0; k < ranks; ++k) o.push_back({k * 1000.0, 2e-6});
  return o;
}

const std::vector<std::string> kHosts = {"h0", "h1", "h2", "h3"};

}  // namespace

TEST_CASE("straggler: the rank that is late every iteration is named", "[straggler]") {
  const auto report = find_straggler({row(4, 20, 1000, 2, 400)}, offsets(4), kHosts);
  REQUIRE(report.straggler);
  CHECK(*report.straggler == 2);
  CHECK(report.ranks[2].last_count == 20);
  CHECK(report.ranks[2].median_late_us == Approx(400).margin(5));
  CHECK(report.reason.find("rank 2 (h2)") != std::string::npos);
  // Clock offsets were applied: without them rank 3 would look 3000 s late.
  CHECK(report.ranks[3].median_late_us < 10);
  REQUIRE(report.lateness_us.size() == 1);
  CHECK(report.lateness_us[0].size() == 20);
  CHECK(report.clock_uncertainty_us == Approx(2));
}

TEST_CASE("straggler: jitter alone names nobody", "[straggler]") {
  // Nobody late: who is last changes with the jitter and by microseconds only.
  const auto report = find_straggler({row(4, 20, 1000, -1, 0)}, offsets(4), kHosts);
  CHECK_FALSE(report.straggler);
  CHECK(report.reason.empty());
}

TEST_CASE("straggler: late but by too little of an iteration is not a straggler", "[straggler]") {
  // 60 us late in a 10 ms iteration: last every time, but 0.6 % of the step.
  const auto report = find_straggler({row(4, 20, 10'000, 1, 60)}, offsets(4), kHosts);
  CHECK(report.ranks[1].last_count == 20);
  CHECK_FALSE(report.straggler);
}

TEST_CASE("straggler: inconsistent rows are skipped, not misread", "[straggler]") {
  ArrivalRow bad = row(4, 5, 1000, 2, 500);
  bad.enter_s[1].pop_back();                       // rank 1 reported one iteration fewer
  ArrivalRow short_row = row(3, 5, 1000, 2, 500);  // three ranks in a four-rank job
  const auto report = find_straggler({bad, short_row}, offsets(4), kHosts);
  CHECK_FALSE(report.straggler);
  CHECK(report.ranks[0].iterations == 0);
  REQUIRE(report.lateness_us.size() == 2);
  CHECK(report.lateness_us[0].empty());
}
