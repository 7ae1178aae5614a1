#pragma once
// Runs the real ibscope binary as a child process for multi-process tests: arguments, extra
// environment, a hard time limit (the child's process group is killed past it), and the
// captured output, exit status and elapsed time.

#include <map>
#include <string>
#include <vector>

namespace ibscope::test {

struct ProcessResult {
  int exit_code = -1;  ///< exit status, or 128 + signal
  bool timed_out = false;
  std::string out, err;
  double elapsed_s = 0;
  int pid = -1;
};

struct ProcessSpec {
  std::vector<std::string> args;           ///< without the binary
  std::map<std::string, std::string> env;  ///< added to (or replacing) the environment
  double limit_s = 120;
  std::string binary;  ///< default: the ibscope under test
};

/// Starts the process; `on_started(pid)` is called right after the fork (may be empty).
ProcessResult run_process(const ProcessSpec& spec);

/// Runs the ibscope under test with `args`, the environment unchanged, for at most `limit_s`.
ProcessResult run_cli(std::vector<std::string> args, double limit_s = 60);

/// Starts without waiting; returns the pid. Use wait_process to collect.
struct Running {
  int pid = -1;
  int out_fd = -1, err_fd = -1;
  double limit_s = 0;
  double started_s = 0;
};
Running start_process(const ProcessSpec& spec);
ProcessResult wait_process(Running& running);

/// Direct children of `pid` (from /proc).
std::vector<int> children_of(int pid);

/// What kill_rank_and_wait() saw: the job's result and how long it took to end after the kill.
struct KilledRun {
  ProcessResult result;
  double after_kill_s = 0;
};
/// Sends SIGKILL to `victim` (one rank of `job`) and waits for `job` to end.
KilledRun kill_rank_and_wait(Running& job, int victim);

/// The pid of the child of `job` (a local launcher) whose environment says IBSCOPE_RANK=`rank`,
/// looked for every 100 ms for up to 10 s; -1 when none appeared.
int rank_pid(const Running& job, int rank);

/// The "# results: PATH" (or "partial results") path printed by ibscope, or "".
std::string results_path(const ProcessResult& r);

/// Called by wait_process (so from the test's own thread) with the path of every results file a
/// finished child announced ("# results: PATH"). The mp tests set it to the schema check in
/// results_json.hpp, so every results file they make is validated; nullptr (default): none.
using ResultsObserver = void (*)(const std::string& path);
void set_results_observer(ResultsObserver observer);

/// A fresh empty directory under the system temp dir.
std::string make_temp_dir();

std::string ibscope_binary();

}  // namespace ibscope::test
