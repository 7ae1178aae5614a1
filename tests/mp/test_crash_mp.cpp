// What a stopped run keeps (issue 26), across real processes: a rank 0 killed (SIGKILL) or
// crashed (SIGABRT, as an assertion inside UCX) leaves its checkpoint with every batch of rows
// measured before, which validate and report read and recover turns into a results file (and
// refuses while the run's rank 0 holds its lock); a crashed peer leaves rank 0 to write the
// results itself; soak, accept and SIGUSR1 (when asked) stop cleanly on a signal with what they
// measured; a full disk costs no checkpoint once it has room again, and a results file it
// refuses is reported with where the rows are (issue 35). The crashes come from the
// IBSCOPE_FAULT_CRASH_RANK hook (job/crash_hook.hpp), at a known batch, the full disk from
// IBSCOPE_FAULT_DISK_FULL (job/disk_full_hook.hpp).

#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "../common/text_lines.hpp"
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

// What a dead rank 0 left in `out`: its checkpoint and its run's lock file, which the kernel
// released when it died. Returns the checkpoint.
fs::path only_checkpoint(const std::string& out) {
  auto files = files_in(out);
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 2);
  REQUIRE(files[0].string().ends_with(".json.lock"));
  REQUIRE(files[1].string() ==
          files[0].string().substr(0, files[0].string().size() - 5) + ".partial");
  return files[1];
}

// An all-reduce sweep of 2 ranks, 8 B .. 1 KiB (8 batches of 2 rows), with these fault hooks.
ProcessResult sweep_with_hooks(const std::map<std::string, std::string>& hooks,
                               const std::string& out) {
  return run_process(
      {{"allreduce", "--np", "2", "-b", "8", "-e", "1K", "--timeout", "20", "--out", out},
       hooks,
       90});
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
  CHECK_FALSE(j.at("complete").get<bool>());
  CHECK(j.at("error").at("kind") == "unfinished");
  // Three sizes (8, 16, 32 B), out of place and in place: every batch before the kill.
  REQUIRE(j.at("collectives").at("rows").size() == 6);
  CHECK(j.at("collectives").at("rows").at(5).at("size_bytes") == 32);
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
  CHECK(doc.at("collectives").at("rows").size() == 6);
  CHECK_THAT(doc.at("error").at("message").get<std::string>(),
             Catch::StartsWith("recovered by `ibscope recover`"));
  const auto again = run_process({{"recover", checkpoint.string()}, {}, 30});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains("exists already"));
  // The lock file the dead rank 0 left is gone with the first recover.
  const std::string name = checkpoint.string().substr(0, checkpoint.string().size() - 8);
  CHECK_FALSE(fs::exists(name + ".lock"));
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
  CHECK(j.at("error").at("kind") == "unfinished");
  CHECK(j.at("collectives").at("rows").size() == 4);
}

TEST_CASE("a peer that aborts mid-sweep leaves rank 0 to write every row before it",
          "[mp][faults][crash]") {
  const std::string out = make_temp_dir();
  const auto r = crashing_sweep("1:3", out);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code != 0);
  const auto doc = load_run_results(r);  // the results file, not a checkpoint
  CHECK_FALSE(doc.at("complete").get<bool>());
  CHECK(doc.at("error").at("kind") != "unfinished");
  CHECK(doc.at("collectives").at("rows").size() >= 6);
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
  CHECK_FALSE(doc.at("complete").get<bool>());
  CHECK(doc.at("error").at("kind") == "interrupted");
  CHECK_THAT(doc.at("error").at("message").get<std::string>(), Catch::Contains("SIGTERM"));
  CHECK(doc.at("soak").at("windows").size() >= 2);
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
  CHECK(doc.at("error").at("kind") == "interrupted");
  CHECK(doc.at("collectives").at("rows").size() >= 2);
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
  CHECK(doc.at("error").at("kind") == "interrupted");
  CHECK_THAT(doc.at("error").at("message").get<std::string>(), Catch::Contains("SIGUSR1"));
  CHECK(doc.at("collectives").at("rows").size() >= 4);
}

TEST_CASE("a checkpoint that failed on a full disk is retried: a killed rank 0 keeps every batch",
          "[mp][faults][crash][checkpoint]") {
  const std::string out = make_temp_dir();
  // The checkpoints of batches 2 and 3 fail (ENOSPC below the file writes), batch 4's is
  // written again, and rank 0 is killed after batch 5.
  const auto r = sweep_with_hooks(
      {{"IBSCOPE_FAULT_DISK_FULL", "2:3"}, {"IBSCOPE_FAULT_CRASH_RANK", "0:5:KILL"}}, out);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code != 0);
  const nlohmann::json j = read_json(only_checkpoint(out));
  CHECK(j.at("collectives").at("rows").size() == 10);  // 5 batches of 2 rows, not the 2 of batch 1
  // Warned once, when it failed; said when it was written again.
  CHECK(ibscope::test::lines_with(r.err, "cannot update the checkpoint").size() == 1);
  CHECK_THAT(r.err, Catch::Contains("cannot update the checkpoint after batch 2 (") &&
                        Catch::Contains("No space left on device"));
  CHECK_THAT(r.err, Catch::Contains("is up to date again after batch 4 (its update had failed "
                                    "since batch 2): it holds the 8 rows measured so far"));
}

TEST_CASE("a results file that a full disk refuses is reported with where the rows are",
          "[mp][faults][checkpoint]") {
  const std::string out = make_temp_dir();
  // Full from the checkpoint of batch 4 to the end: the results file cannot be written, nor
  // the checkpoint updated; the one of batch 3 holds 6 of the 16 rows.
  const auto r = sweep_with_hooks({{"IBSCOPE_FAULT_DISK_FULL", "4"}}, out);
  INFO(describe(r));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(
      r.err,
      Catch::Contains("error: cannot write the results file " + out + "/ibscope-allreduce-") &&
          Catch::Contains(".json: No space left on device (errno 28); the checkpoint " + out +
                          "/ibscope-allreduce-") &&
          Catch::Contains(".json.partial could not be updated either (No space left "
                          "on device): it holds the 6 rows measured until ") &&
          Catch::Contains(", of 16; `ibscope recover "));
  CHECK(ibscope::test::lines_with(r.err, "cannot update the checkpoint").size() == 1);
  CHECK_THAT(r.err, !Catch::Contains("# results:"));
  // Rank 0 ended alive: its lock is gone and the checkpoint does not say it was killed.
  const auto files = files_in(out);
  REQUIRE(files.size() == 1);
  REQUIRE(files[0].string().ends_with(".json.partial"));
  const nlohmann::json j = read_json(files[0]);
  CHECK(j.at("collectives").at("rows").size() == 6);
  CHECK_THAT(j.at("error").at("message").get<std::string>(),
             Catch::StartsWith("rank 0 (pid ") &&
                 Catch::Contains("had not written its results file yet: this checkpoint holds "
                                 "the 6 rows measured until"));
}

TEST_CASE("recover refuses the checkpoint of a running sweep and takes it once rank 0 is killed",
          "[mp][faults][crash][recover]") {
  const std::string out = make_temp_dir();
  // Rank 1 sleeps 10 ms per call: each size takes about 0.5 s, the whole sweep some 10 s.
  Running job = start_process(
      {{"allreduce", "--np", "2", "-b", "8", "-e", "1M", "--timeout", "20", "--out", out},
       {{"IBSCOPE_FAULT_DELAY_RANK", "1:10000"}},
       120});
  const int rank0 = rank_pid(job, 0);
  const bool ready = wait_for_checkpoint(out, 2, "collectives");
  fs::path checkpoint;
  for (const auto& f : files_in(out)) {
    if (f.string().ends_with(".json.partial")) checkpoint = f;
  }
  const auto refused = run_process({{"recover", checkpoint.string()}, {}, 30});
  const KilledRun killed = kill_rank_and_wait(job, rank0);
  INFO(describe(refused));
  INFO(describe(killed.result));
  REQUIRE(ready);
  REQUIRE(rank0 > 0);
  CHECK(refused.exit_code == 2);  // a usage error: recover it later
  CHECK_THAT(refused.err, Catch::Contains(checkpoint.string() +
                                          " is the checkpoint of a run that is still going: rank "
                                          "0 (pid " +
                                          std::to_string(rank0) + " on ") &&
                              Catch::Contains(" holds its lock " + out + "/"));
  CHECK(killed.result.exit_code != 0);

  const auto rec = run_process({{"recover", checkpoint.string()}, {}, 30});
  INFO(describe(rec));
  CHECK(rec.exit_code == 0);
  const std::string name = checkpoint.string().substr(0, checkpoint.string().size() - 8);
  CHECK(results_path(rec) == name);  // <name>.json
  CHECK(load_run_results(rec).at("collectives").at("rows").size() >= 2);
  CHECK_FALSE(fs::exists(name + ".lock"));
}
