#pragma once
/// Signals that end a run cleanly (issue 26): SIGINT (Ctrl-C), SIGTERM (a scheduler's time limit,
/// scancel), SIGHUP, and SIGUSR1 when asked (`sbatch --signal=USR1@60`). The first one only
/// records the signal; the rank's waits notice it at their next poll and throw InterruptedError,
/// so the job stops at a safe point and rank 0 writes the rows measured so far (complete=false,
/// the reason). A second signal ends the process at once, as the signal's default action.

#include <string>
#include <string_view>

#include "ibscope/core/error.hpp"

namespace ibscope {

/// Installs the handlers (idempotent). `usr1`: SIGUSR1 too. Not SA_RESTART: a blocking poll
/// returns EINTR and its loop calls throw_if_interrupted.
void install_interrupt_handlers(bool usr1 = false);

/// The signal received since install_interrupt_handlers (0: none). Async-signal-safe.
int interrupt_signal() noexcept;

/// "SIGTERM", "SIGINT", ... ("signal N" for others).
std::string signal_name(int sig);

/// The run was interrupted by a signal; exit status 128 + signal.
class InterruptedError : public Error {
 public:
  InterruptedError(int sig, const std::string& message)
      : Error(ErrorKind::kInterrupted, message), signal_(sig) {}
  int signal() const noexcept { return signal_; }

 private:
  int signal_;
};

/// How this process names itself in the message, e.g. "rank 5 (node017)" (default "this
/// rank"). Set once, before other threads start.
void set_interrupt_identity(std::string who);

/// Throws InterruptedError("interrupted by SIGTERM on rank 5 (node017)") when a signal was
/// received.
void throw_if_interrupted();

/// For tests: forget a recorded signal (the handlers stay).
void reset_interrupt_for_tests() noexcept;

}  // namespace ibscope
