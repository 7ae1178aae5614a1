// Signals and standard output from the caller's side (issue 35): a reader of standard output that
// goes away (`| head`) costs the printed rows, never the run; a signal the caller ignores (nohup)
// stays ignored; a SIGTERM in the launcher's first milliseconds still stops the job with 143.

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "results_json.hpp"
#include "run_files.hpp"

using namespace ibscope::test;

namespace {

// `ibscope args... | head -n 10` through bash; the exit status is ibscope's (PIPESTATUS).
ProcessResult run_into_head(const std::vector<std::string>& args) {
  std::vector<std::string> all{"-c", R"("$0" "$@" | head -n 10; exit "${PIPESTATUS[0]}")",
                               ibscope_binary()};
  all.insert(all.end(), args.begin(), args.end());
  return run_process({all, {}, 90, "/bin/bash"});
}

// The run in `out` wrote its complete results file with `rows` collective rows, and no
// checkpoint is left.
void check_complete_results(const std::string& out, std::size_t rows) {
  const auto files = files_in(out);
  REQUIRE(files.size() == 1);
  REQUIRE(files[0].extension() == ".json");
  const auto doc = read_json(files[0]);
  CHECK(doc.at("complete").get<bool>());
  CHECK(doc.at("collectives").at("rows").size() == rows);
}

std::size_t count_lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST_CASE("ibscope | head: the rows stop, the run goes on and writes its results, exit 0",
          "[mp][signals][stdout]") {
  const std::string out = make_temp_dir();
  SECTION("through the local launcher") {
    // 1 KiB .. 1 MiB: 11 sizes; head leaves after the third row.
    const auto r = run_into_head({"allreduce", "--np", "2", "-b", "1K", "-e", "1M", "-n", "20",
                                  "--timeout", "30", "--out", out});
    INFO(describe(r));
    CHECK(r.exit_code == 0);
    CHECK(count_lines(r.out) == 10);
    CHECK_THAT(r.err, Catch::Contains("standard output was closed by its reader"));
    CHECK_THAT(r.err, Catch::Contains("# results: " + out));  // on stderr now
    check_complete_results(out, 2 * 11);
  }
  SECTION("a rank that prints its rows itself (--np 1)") {
    // 1 KiB .. 4 MiB: 13 sizes, 100 iterations each: rows for a while after head has left.
    const auto r = run_into_head(
        {"allreduce", "--np", "1", "-b", "1K", "-e", "4M", "-n", "100", "--out", out});
    INFO(describe(r));
    CHECK(r.exit_code == 0);
    CHECK(count_lines(r.out) == 10);
    CHECK_THAT(r.err, Catch::Contains("standard output was closed by its reader"));
    CHECK_THAT(r.err, Catch::Contains("# results: " + out));
    check_complete_results(out, 2 * 13);
  }
}

TEST_CASE("a SIGHUP the caller ignores (nohup) leaves the run going, SIGTERM still stops it",
          "[mp][signals]") {
  const std::string out = make_temp_dir();
  // bash's `trap '' HUP` is nohup's SIG_IGN, kept across exec.
  Running job =
      start_process({{"-c", R"(trap '' HUP; exec "$0" "$@")", ibscope_binary(), "allreduce", "--np",
                      "2", "-b", "1K", "-e", "256M", "-n", "20", "--timeout", "30", "--out", out},
                     {},
                     90,
                     "/bin/bash"});
  const bool first_rows = wait_for_checkpoint(out, 2, "collectives", 30);
  // To the launcher and to each rank: each of them must leave it ignored.
  ::kill(job.pid, SIGHUP);
  for (int rank : {0, 1}) {
    const int pid = rank_pid(job, rank);
    if (pid > 0) ::kill(pid, SIGHUP);
  }
  const bool went_on = wait_for_checkpoint(out, 6, "collectives", 30);
  ::kill(job.pid, SIGTERM);
  const auto r = wait_process(job);
  INFO(describe(r));
  REQUIRE(first_rows);
  CHECK(went_on);
  CHECK(r.exit_code == 143);
  CHECK_THAT(r.err, !Catch::Contains("SIGHUP"));
  const auto doc = load_run_results(r);
  CHECK_FALSE(doc.at("complete").get<bool>());
  CHECK_THAT(doc.at("error").at("message").get<std::string>(),
             Catch::Contains("interrupted by SIGTERM"));
  CHECK(doc.at("collectives").at("rows").size() >= 6);
}

TEST_CASE("a SIGTERM in the launcher's first milliseconds exits 143, no rank killed by it",
          "[mp][signals]") {
  const std::string out = make_temp_dir();
  // From before the exec to the ranks' start (the window of a rank without handlers).
  for (int delay_ms = 0; delay_ms <= 60; delay_ms += 10) {
    Running job = start_process({{"allreduce", "--np", "2", "-b", "1K", "-e", "16M", "-n", "20",
                                  "--timeout", "30", "--out", out},
                                 {},
                                 60});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(job.pid, SIGTERM);
    const auto r = wait_process(job);
    INFO("SIGTERM after " << delay_ms << " ms: " << describe(r));
    CHECK(r.exit_code == 143);
    CHECK(r.elapsed_s < 10);  // not after the job timeout
    CHECK_THAT(r.err, !Catch::Contains("killed by signal"));
  }
}
