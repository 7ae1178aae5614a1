#pragma once
/// Signals that end a run cleanly (issue 26): SIGINT (Ctrl-C), SIGTERM (a scheduler's time limit,
/// scancel), SIGHUP, and SIGUSR1 when asked (`sbatch --signal=USR1@60`). The first one only
/// records the signal; the rank's waits notice it at their next poll and throw InterruptedError,
/// so the job stops at a safe point and rank 0 writes the rows measured so far (complete=false,
/// the reason). A second signal ends the process at once, as the signal's default action.
///
/// A signal the caller set to SIG_IGN stays ignored (issue 35): `nohup ibscope ... &` survives
/// SIGHUP, a shell's background job SIGINT, as with every long-running Unix tool.

#include <signal.h>

#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/error.hpp"

namespace ibscope {

/// The signals that stop a run: SIGINT, SIGTERM, SIGHUP, and SIGUSR1 when `usr1`.
std::vector<int> interrupt_signals(bool usr1);

/// Whether the caller of ibscope ignores `sig`: SIG_IGN (from `nohup`, a shell's background job)
/// when the process started, before any library's constructor (libucs puts its debug handler on
/// SIGHUP over it), or now.
bool ignored_by_caller(int sig) noexcept;

/// Sets `sig` to SIG_IGN again (over libucs's debug handler): for a signal ignored_by_caller.
void keep_ignored(int sig) noexcept;

/// Installs the handlers (idempotent), except on a signal ignored_by_caller, which stays ignored
/// (keep_ignored), then unblocks the signals in the calling thread (the local launcher starts its
/// ranks with them blocked: BlockedInterruptSignals). `usr1`: SIGUSR1 too. Not SA_RESTART: a
/// blocking poll returns EINTR and its loop calls throw_if_interrupted. Call it before other
/// threads start.
void install_interrupt_handlers(bool usr1 = false);

/// Blocks interrupt_signals(usr1) in the calling thread while it lives; the destructor restores
/// the previous mask, and a signal that came meanwhile is delivered then. The local launcher
/// forks its ranks inside one: a rank starts with the signals blocked (the mask survives exec),
/// so a signal forwarded before its handlers exist waits, pending, instead of killing it; its
/// install_interrupt_handlers unblocks them.
class BlockedInterruptSignals {
 public:
  explicit BlockedInterruptSignals(bool usr1);
  ~BlockedInterruptSignals();
  BlockedInterruptSignals(const BlockedInterruptSignals&) = delete;
  BlockedInterruptSignals& operator=(const BlockedInterruptSignals&) = delete;

 private:
  sigset_t previous_{};
};

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
