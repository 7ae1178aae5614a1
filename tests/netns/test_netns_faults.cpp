// Faults across network-namespace hosts: a cut link, a killed rank, a rank that never starts, a
// rank that stops answering. Every survivor must end within --timeout + 5 s of the fault, with
// exactly one error line naming the phase and the stalled rank with its host, exit non-zero,
// and rank 0 must leave its results on disk marked incomplete.

#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <regex>
#include <thread>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

namespace {

constexpr double kTimeoutS = 8;  // ibscope --timeout
constexpr int kVictim = 2;

/// A long all-reduce sweep (about 100 s at 200 Mbit) that a fault interrupts.
std::vector<std::string> long_allreduce(const std::string& out) {
  return {"allreduce", "-b", "64K",       "-e", "64M",   "-n", "20",
          "-w",        "1",  "--timeout", "8",  "--out", out,  "-q"};
}

/// Lets the job measure for a while: bootstrap and UCX wire-up over the shaped links first.
void let_it_measure() { std::this_thread::sleep_for(std::chrono::seconds(5)); }

/// The checks every surviving rank must pass, `fault_at_s` on steady_now_s()'s clock.
void check_survivors(const NetnsJob& job, const std::vector<ProcessResult>& res,
                     const std::vector<int>& survivors, double fault_at_s,
                     const std::string& must_name, bool names_phase = true) {
  for (int r : survivors) {
    const auto& p = res[static_cast<std::size_t>(r)];
    const double after_fault_s = job.ended_at_s(r) - fault_at_s;
    INFO("rank " << r << " ended " << after_fault_s << " s after the fault; " << describe(p));
    CHECK_FALSE(p.timed_out);
    CHECK(p.exit_code == 1);
    CHECK(after_fault_s < kTimeoutS + 5);
    const auto errors = lines_with(p.err, "error:");
    REQUIRE(errors.size() == 1);
    CHECK(std::regex_search(errors[0], std::regex(must_name)));
    if (names_phase) CHECK(errors[0].find("allreduce") != std::string::npos);  // the phase
  }
  const auto& r0 = res[0];
  INFO(describe(r0));
  const auto doc = load_run_results(r0);
  CHECK_FALSE(doc["complete"].get<bool>());
  CHECK(std::regex_search(doc["error"]["message"].get<std::string>(), std::regex(must_name)));
}

/// A stalled peer named with its host, "rank K (<prefix>-hK)". Which rank a survivor names
/// after a stall is the first that gave up waiting (often a ring neighbour of the stalled one),
/// not yet always the stalled rank itself.
std::string any_rank_with_host(const NetnsHosts& hosts) {
  return "rank ([0-9]) \\(" + hosts.prefix() + "-h\\1\\)";
}

}  // namespace

TEST_CASE("netns: a link cut mid-all-reduce ends every rank in time, naming the cut host",
          "[netns][faults]") {
  NetnsHosts hosts(4, "200mbit", "nc");
  const std::string out = make_temp_dir();
  NetnsJob job(hosts, long_allreduce(out), 120);
  job.start_all();
  let_it_measure();
  const double cut_at = steady_now_s();
  hosts.link(kVictim, false);
  const auto res = job.wait_all();
  check_survivors(job, res, {0, 1, 3}, cut_at, any_rank_with_host(hosts));
  // The rank behind the cut has no one to tell, but it too ends by its own deadline.
  const auto& cut = res[kVictim];
  INFO(describe(cut));
  CHECK_FALSE(cut.timed_out);
  CHECK(cut.exit_code == 1);
  CHECK(job.ended_at_s(kVictim) - cut_at < kTimeoutS + 10);
}

TEST_CASE("netns: a rank killed mid-all-reduce ends the others in time, naming it",
          "[netns][faults]") {
  NetnsHosts hosts(4, "200mbit", "nk");
  const std::string out = make_temp_dir();
  NetnsJob job(hosts, long_allreduce(out), 120);
  job.start_all();
  let_it_measure();
  const double killed_at = steady_now_s();
  REQUIRE(::kill(job.pid(kVictim), SIGKILL) == 0);
  const auto res = job.wait_all();
  CHECK(res[kVictim].exit_code == 128 + SIGKILL);
  // A killed rank's connections close: every survivor learns who it was.
  check_survivors(job, res, {0, 1, 3}, killed_at, "rank 2 \\(" + hosts.host(kVictim) + "\\)",
                  /*names_phase=*/false);  // "exited or crashed", "UCX send ... failed"
}

TEST_CASE("netns: a rank that stops answering (SIGSTOP) ends the others in time, naming it",
          "[netns][faults]") {
  NetnsHosts hosts(4, "200mbit", "ns");
  const std::string out = make_temp_dir();
  NetnsJob job(hosts, long_allreduce(out), 120);
  job.start_all();
  let_it_measure();
  const double stopped_at = steady_now_s();
  const int victim = job.pid(kVictim);
  REQUIRE(::kill(victim, SIGSTOP) == 0);
  // The stopped rank is killed as soon as the last survivor has ended (or the job's limit
  // ended them): it must not answer late and let them pass.
  std::atomic<int> survivors_left{3};
  const auto res = job.wait_all([&](int rank) {
    if (rank != kVictim && --survivors_left == 0) {
      ::kill(victim, SIGKILL);
      ::kill(victim, SIGCONT);
    }
  });
  check_survivors(job, res, {0, 1, 3}, stopped_at, any_rank_with_host(hosts));
}

TEST_CASE("netns: a rank that never starts ends the others in time, naming it", "[netns][faults]") {
  NetnsHosts hosts(4, "200mbit", "nn");
  const std::string out = make_temp_dir();
  NetnsJob job(hosts, long_allreduce(out), 120);
  const double started_at = steady_now_s();
  for (int r : {0, 1, 3}) job.start(r);
  const auto res = job.wait_all();
  for (int r : {0, 1, 3}) {
    const auto& p = res[static_cast<std::size_t>(r)];
    INFO("rank " << r << ": " << describe(p));
    CHECK_FALSE(p.timed_out);
    CHECK(p.exit_code == 1);
    CHECK(job.ended_at_s(r) - started_at < kTimeoutS + 5);
    const auto errors = lines_with(p.err, "error:");
    REQUIRE(errors.size() == 1);
    // Its host is unknown: it never said hello. The phase is the bootstrap.
    CHECK(errors[0].find("rank 2 (never connected)") != std::string::npos);
    CHECK(errors[0].find("bootstrap") != std::string::npos);
  }
}
