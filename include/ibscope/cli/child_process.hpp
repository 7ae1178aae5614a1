#pragma once
/// `ibscope watch -- CMD ARGS...`: the command as a child process (fork, then execvp with
/// ibscope's environment; the child stays in ibscope's process group, so it keeps the terminal).
/// Its end can be waited for in a poll (a pidfd), beside a deadline and the interrupt signals.

#include <optional>
#include <string>
#include <vector>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::cli {

/// The command could not be started (execvp failed in the child). exit_status(): 127 when it
/// was not found (ENOENT, ENOTDIR), else 126 (not executable), as a shell has it.
class ExecError : public SystemError {
 public:
  ExecError(const std::string& command, int errno_value);
  int exit_status() const noexcept;
};

class ChildProcess {
 public:
  /// Starts `argv` (argv[0] looked up in PATH). Throws ExecError when it cannot run, SystemError
  /// when fork fails. Returns once the child has exec'd.
  explicit ChildProcess(const std::vector<std::string>& argv);
  /// A child still running is left running (a failing watch must not stop the job it watches).
  ~ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const noexcept { return pid_; }
  /// Readable (POLLIN) once the child has ended; -1 where the kernel has no pidfd_open.
  int pollable_fd() const noexcept { return pidfd_.get(); }
  /// Without blocking: the exit status once it ended (128 + N when killed by signal N), reaped;
  /// nothing while it runs.
  std::optional<int> poll();
  /// Sends `sig` to the child (nothing once it was reaped).
  void signal(int sig) noexcept;

 private:
  int pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  bootstrap::net::Fd pidfd_;
};

/// Whether a `sig` ibscope received came from its terminal to its whole foreground process
/// group, so that a child in that group got it too: SIGINT or SIGQUIT while ibscope's group is
/// the terminal's foreground group.
bool terminal_sent_to_group(int sig) noexcept;

}  // namespace ibscope::cli
