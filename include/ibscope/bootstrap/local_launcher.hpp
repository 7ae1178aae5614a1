#pragma once
/// The local launcher: `ibscope <cmd> --np N` with no launcher around forks N ranks of this
/// same binary on this host, wires them through a TCP store on loopback (a listening socket
/// handed to rank 0, a fresh random job token), forwards their output, and returns the worst
/// exit status. When a rank fails, the others are told through the store and given the job
/// timeout to stop on their own, then terminated; children die with the launcher
/// (PR_SET_PDEATHSIG), so no rank outlives it.
///
/// Output: rank 0's stdout is passed through unchanged (tables, --format json); every other
/// line gets a "[rank N] " prefix unless it already names its rank (ibscope's own log lines).

#include <string>
#include <vector>

namespace ibscope::bootstrap {

struct LocalLaunchOptions {
  int np = 2;
  double timeout_s = 60;
  std::vector<std::string> argv;  ///< the command line to run in each rank (argv[0] ignored)
  bool forward_usr1 = false;      ///< forward SIGUSR1 too (--stop-on-usr1)
};

/// Runs the ranks to completion. Returns 0 when all succeeded, otherwise the worst status (a
/// rank killed by a signal the launcher forwarded counts as 128 + the signal, by any other as
/// 1). Throws SystemError if it cannot start them.
///
/// Signals: SIGINT, SIGTERM, SIGHUP (and SIGUSR1 when asked) are forwarded to every rank, unless
/// the caller ignores them (nohup), which the ranks then ignore too. The ranks start with them
/// blocked, until install_interrupt_handlers (core/interrupt.hpp). Standard output whose reader
/// went away (`| head`) is dropped (core/closed_stdout.hpp); rank 0's "# results: ..." lines go
/// to stderr then.
int run_local_launcher(const LocalLaunchOptions& options);

/// A random 128-bit job token as 32 hex digits (getrandom).
std::string make_job_token();

}  // namespace ibscope::bootstrap
