// What a stopped run keeps (issue 26), across real processes: a rank 0 killed (SIGKILL) or
// crashed (SIGABRT, as an assertion inside UCX) leaves its checkpoint with every batch of rows
// measured before, which validate and report read and recover turns into a results file; a
// crashed peer leaves rank 0 to write the results itself; soak, accept and SIGUSR1 (when asked)
// stop cleanly on a signal with what they measured. The crashes come from the
// IBSCOPE_FAULT_CRASH_RANK hook (cli/crash_hook.hpp), at a known batch.

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "results_json.hpp"
#include "run_files.hpp"

using namespace ibscope::test;
namespace fs = std::filesystem;

namespace {

// An all-reduce sweep of 2 ranks, 8 B .. 1 MiB, with the crash hook set to `hook`.
ProcessResult crashing_sweep(const std::string& hook, const std::string& out) {
  return run_process(
      {{"allreduce", "--np", "2", "-b", "8", "-e", "1M", "--timeout", "20", "--out", out},
       {{"IBSCOPE_FAULT_CRASH_RANK", hook}},
       90});
}

// The run's only file in `out`, which must be its checkpoint.
fs::path only_checkpoint(const std::string& out) {
  const auto files = files_in(out);
  REQUIRE(files.size() == 1);
  REQUIRE(files[0].string().ends_with(".json.partial"));
  return files[0];
}

// Starts `args` through the local launcher, sends `sig` to it once `rows` rows of `section` are
// checkpointed, and returns what it did.
ProcessResult signal_after_rows(std::vector<std::string> args, const std::string& out,
                                std::size_t rows, const char* section, int sig) {
  Running job = start_process({std::move(args), {}, 120});
  const bool ready = wait_for_checkpoint(out, rows, section);
  ::kill(job.pid, sig);
  ProcessResult r = wait_process(job);
  INFO(describe(r));
  REQUIRE(ready);
  return r;
}

}  // namespace

TEST_CASE("a rank 0 killed by SIGKILL leaves a checkpoint with every row measured before",
          "[mp][faults][crash]") {
  const std::string out = make_temp_dir();
  const auto r = crashing_sweep("0:3:KILL", out);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code != 0);
  const fs::path checkpoint = only_checkpoint(out);
  const nlohmann::json j = read_json(checkpoint);
  CHECK_FALSE(j["complete"].get<bool>());
  CHECK(j["error"]["kind"] == "unfinished");
  // Three sizes (8, 16, 32 B), out of place and in place: every batch before the kill.
  REQUIRE(j["collectives"]["rows"].size() == 6);
  CHECK(j["collectives"]["rows"][5]["size_bytes"] == 32);
  // Rank 1 says where rank 0's rows are.
  CHECK_THAT(r.err, Catch::Contains("what rank 0 measured is in its checkpoint " + out +
                                    "/ibscope-allreduce-*.json.partial on "));

  // validate and report read it as it is.
  const auto v = run_process({{"validate", checkpoint.string()}, {}, 30});
  INFO(describe(v));
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::Contains("6 collective rows") && Catch::Contains("INCOMPLETE"));
  const std::string html = out + "/report.html";
  const auto rep = run_process({{"report", checkpoint.string(), "-o", html}, {}, 60});
  INFO(describe(rep));
  CHECK(rep.exit_code == 0);
  CHECK(fs::exists(html));

  // recover makes a results file of it, once.
  const auto rec = run_process({{"recover", checkpoint.string()}, {}, 30});
  INFO(describe(rec));
  CHECK(rec.exit_code == 0);
  CHECK_THAT(rec.out, Catch::Contains("6 rows recovered"));
  const auto doc = load_run_results(rec);
  CHECK(doc["collectives"]["rows"].size() == 6);
  CHECK_THAT(doc["error"]["message"].get<std::string>(),
             Catch::StartsWith("recovered by `ibscope recover`"));
  const auto again = run_process({{"recover", checkpoint.string()}, {}, 30});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains("exists already"));
}

TEST_CASE("a rank 0 that aborts (SIGABRT as inside UCX) leaves its checkpoint",
          "[mp][faults][crash]") {
  const std::string out = make_temp_dir();
  const auto r = crashing_sweep("0:2", out);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("rank 0") && Catch::Contains("ABRT"));
  const nlohmann::json j = read_json(only_checkpoint(out));
  CHECK(j["error"]["kind"] == "unfinished");
  CHECK(j["collectives"]["rows"].size() == 4);
}

TEST_CASE("a peer that aborts mid-sweep leaves rank 0 to write every row before it",
          "[mp][faults][crash]") {
  const std::string out = make_temp_dir();
  const auto r = crashing_sweep("1:3", out);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code != 0);
  const auto doc = load_run_results(r);  // the results file, not a checkpoint
  CHECK_FALSE(doc["complete"].get<bool>());
  CHECK(doc["error"]["kind"] != "unfinished");
  CHECK(doc["collectives"]["rows"].size() >= 6);
  const auto files = files_in(out);
  REQUIRE(files.size() == 1);
  CHECK(files[0].extension() == ".json");  // the checkpoint is gone
}

TEST_CASE("soak stopped by SIGTERM keeps its windows and exits 143", "[mp][faults][signals]") {
  const std::string out = make_temp_dir();
  const auto r = signal_after_rows({"soak", "--np", "2", "--duration", "10m", "--window", "1s",
                                    "--sizes", "64K", "--timeout", "20", "--out", out},
                                   out, 2, "soak", SIGTERM);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 143);
  const auto doc = load_run_results(r);
  CHECK_FALSE(doc["complete"].get<bool>());
  CHECK(doc["error"]["kind"] == "interrupted");
  CHECK_THAT(doc["error"]["message"].get<std::string>(), Catch::Contains("SIGTERM"));
  CHECK(doc["soak"]["windows"].size() >= 2);
  CHECK(files_in(out).size() == 1);
}

TEST_CASE("accept stopped by SIGINT keeps the rows it measured and exits 130",
          "[mp][faults][signals]") {
  const std::string out = make_temp_dir();
  const auto r = signal_after_rows(
      {"accept", "--np", "2", "--transport", "ucx", "-A", "ring", "--ar-sizes",
       "8,1K,64K,1M,16M,64M,256M", "--ar-iters", "200", "--timeout", "30", "--out", out},
      out, 2, "collectives", SIGINT);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 130);
  const auto doc = load_run_results(r);
  CHECK(doc["error"]["kind"] == "interrupted");
  CHECK(doc["collectives"]["rows"].size() >= 2);
}

TEST_CASE("SIGUSR1 stops the run cleanly with exit 138 when --stop-on-usr1 is given",
          "[mp][faults][signals]") {
  const std::string out = make_temp_dir();
  const auto r = signal_after_rows({"allreduce", "--np", "2", "-b", "8", "-e", "256M", "-n", "200",
                                    "--stop-on-usr1", "--timeout", "30", "--out", out},
                                   out, 4, "collectives", SIGUSR1);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 138);
  const auto doc = load_run_results(r);
  CHECK(doc["error"]["kind"] == "interrupted");
  CHECK_THAT(doc["error"]["message"].get<std::string>(), Catch::Contains("SIGUSR1"));
  CHECK(doc["collectives"]["rows"].size() >= 4);
}
