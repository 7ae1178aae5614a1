#include "ibscope/cli/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace ibscope::cli {

ExecError::ExecError(const std::string& command, int errno_value)
    : SystemError(fmt::format("cannot run '{}'", command), errno_value) {}

int ExecError::exit_status() const noexcept {
  return errno_value() == ENOENT || errno_value() == ENOTDIR ? 127 : 126;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw UsageError("no command after --");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child reports a failed exec through a close-on-exec pipe: EOF means it exec'd.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SystemError("cannot create a pipe", errno);
  bootstrap::net::Fd read_end(fds[0]), write_end(fds[1]);
  pid_ = ::fork();
  if (pid_ < 0) throw SystemError(fmt::format("cannot fork to run '{}'", argv[0]), errno);
  if (pid_ == 0) {
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] const ssize_t n = ::write(write_end.get(), &e, sizeof(e));
    ::_exit(127);
  }
  write_end.reset();
  int child_errno = 0;
  ssize_t n = 0;
  do {
    n = ::read(read_end.get(), &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    throw ExecError(argv[0], child_errno);
  }
  // A zombie still has its pidfd: a child that already ended is seen at the first poll.
  pidfd_ = bootstrap::net::Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
}

std::optional<int> ChildProcess::poll() {
  if (reaped_) return status_;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return std::nullopt;
  reaped_ = true;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status_;
}

void ChildProcess::signal(int sig) noexcept {
  if (!reaped_) ::kill(pid_, sig);
}

bool terminal_sent_to_group(int sig) noexcept {
  if (sig != SIGINT && sig != SIGQUIT) return false;
  const int fd = ::open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;  // no controlling terminal
  const pid_t foreground = ::tcgetpgrp(fd);
  ::close(fd);
  return foreground == ::getpgrp();
}

}  // namespace ibscope::cli
