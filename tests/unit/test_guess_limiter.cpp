// The TCP store's budget of wrong job tokens per source (issue 35, guess_limiter.hpp): pure
// logic, time passed in.

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "ibscope/bootstrap/guess_limiter.hpp"

using ibscope::Clock;
using ibscope::bootstrap::guess_source;
using ibscope::bootstrap::GuessLimiter;

namespace {

Clock::time_point guess_clock(Clock::time_point t0, double s) {
  return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Tries of `source` at `now`, spending one for each allowed: the verdicts a guesser gets.
int guesses_allowed(GuessLimiter& g, const std::string& source, Clock::time_point now, int tries) {
  int allowed = 0;
  for (int i = 0; i < tries; ++i) {
    if (!g.may_try(source, now)) continue;
    g.spend(source, now);
    ++allowed;
  }
  return allowed;
}

}  // namespace

TEST_CASE("guess limiter: a burst of wrong tokens, then one per interval",
          "[tcp_store][attack][guess]") {
  GuessLimiter g({10, 2, 4096});
  const auto t0 = Clock::now();
  CHECK(guesses_allowed(g, "192.0.2.7", t0, 1000) == 10);
  CHECK_FALSE(g.may_try("192.0.2.7", t0));
  CHECK(g.wait_s("192.0.2.7", t0) == Approx(0.5));
  CHECK(guesses_allowed(g, "192.0.2.7", guess_clock(t0, 0.4), 1000) == 0);
  CHECK(guesses_allowed(g, "192.0.2.7", guess_clock(t0, 0.5), 1000) == 1);
  // 10 s of guessing as fast as it can: the refill (2 a second), not the attempts, decides.
  int verdicts = 0;
  for (int ms = 600; ms <= 10550; ms += 1) {
    verdicts += guesses_allowed(g, "192.0.2.7", guess_clock(t0, ms / 1000.0), 5);
  }
  CHECK(verdicts == 20);
  // Idle, the budget refills up to the burst, not beyond.
  CHECK(guesses_allowed(g, "192.0.2.7", guess_clock(t0, 1000), 1000) == 10);
}

TEST_CASE("guess limiter: right tokens spend nothing, other sources are not touched",
          "[tcp_store][attack][guess]") {
  GuessLimiter g({10, 1, 4096});
  const auto t0 = Clock::now();
  // A thousand ranks of one host, all with the right token: every hello is checked.
  for (int i = 0; i < 1000; ++i) REQUIRE(g.may_try("10.1.0.5", t0));
  CHECK(g.tracked() == 0);
  // A guesser next door spends only its own budget.
  CHECK(guesses_allowed(g, "10.1.0.6", t0, 50) == 10);
  CHECK(g.may_try("10.1.0.5", t0));
  CHECK(g.wait_s("10.1.0.5", t0) == 0.0);
  CHECK_FALSE(g.may_try("10.1.0.6", t0));
}

TEST_CASE("guess limiter: the table of sources is bounded, new ones share a budget",
          "[tcp_store][attack][guess]") {
  GuessLimiter g({2, 1, 100});
  const auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) {
    CHECK(guesses_allowed(g, "10.2.0." + std::to_string(i), t0, 5) == 2);
  }
  CHECK(g.tracked() == 100);
  // The table is full of spent budgets: 200 more sources share one budget of 2.
  int shared = 0;
  for (int i = 0; i < 200; ++i) shared += guesses_allowed(g, "10.3.0." + std::to_string(i), t0, 1);
  CHECK(shared == 2);
  CHECK(g.tracked() == 100);
  // Once the budgets have refilled, the sources are forgotten and new ones get their own.
  const auto later = guess_clock(t0, 5);
  CHECK(guesses_allowed(g, "10.4.0.1", later, 5) == 2);
  CHECK(g.tracked() == 1);
  // At least one try, whatever the budget says.
  GuessLimiter none({0, 0, 10});
  CHECK(guesses_allowed(none, "10.5.0.1", t0, 3) == 1);
  CHECK(none.wait_s("10.5.0.1", t0) > 1e9);
}

TEST_CASE("guess limiter: a source is an IPv4 address or an IPv6 /64", "[tcp_store][guess]") {
  CHECK(guess_source("192.0.2.7:40112") == "192.0.2.7");
  CHECK(guess_source("127.0.0.1:1") == "127.0.0.1");
  CHECK(guess_source("2001:db8:1:2:aaaa:bbbb:cccc:dddd:5000") == "2001:db8:1:2::/64");
  CHECK(guess_source("2001:db8:1:2::9:5000") == guess_source("2001:db8:1:2:ffff::1:6000"));
  CHECK(guess_source("2001:db8:1:3::9:5000") != guess_source("2001:db8:1:2::9:5000"));
  CHECK(guess_source("[2001:db8::1]:29500") == "2001:db8::/64");
  CHECK(guess_source("::ffff:192.0.2.9:7") == "192.0.2.9");
  CHECK(guess_source("::1:29500") == "::/64");
  CHECK(guess_source("unknown peer") == "unknown peer");
}
