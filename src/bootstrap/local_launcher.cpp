#include "ibscope/bootstrap/local_launcher.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/closed_stdout.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/interrupt.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/random_hex.hpp"

namespace ibscope::bootstrap {
namespace {

// After the first rank fails, the others get the job timeout plus this to stop by themselves
// (they learn of the failure through the store within a second); then SIGTERM, then SIGKILL.
constexpr double kGraceExtraS = 5.0;
constexpr double kTermToKillS = 3.0;

volatile std::sig_atomic_t g_forward_signal = 0;
// The signals forwarded to the ranks: a rank they killed (a second Ctrl-C) ends the launcher
// with 128 + the signal, as the rank's own interrupted exit would.
std::array<bool, NSIG> g_forwarded{};

extern "C" void on_signal(int sig) { g_forward_signal = sig; }

struct Stream {
  net::Fd fd;
  std::string partial;
  bool is_stdout = false;
};

struct Child {
  int rank = 0;
  pid_t pid = -1;
  Stream out, err;
  bool running = true;
  int status = 0;
};

void write_fd(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Rank 0's lines that say where its files are: when standard output is closed (`| head`), they
// go to stderr, where they can still be read.
bool names_a_file(std::string_view line) {
  for (std::string_view p : {"# results: ", "# partial results", "# csv: ", "# report: "}) {
    if (line.starts_with(p)) return true;
  }
  return false;
}

// "\r ESC[2K": erases the terminal line; rank 0's progress line starts with it.
constexpr std::string_view kEraseLine = "\r\x1b[2K";
// Whether rank 0's progress line is on the terminal now (forwarded without a newline).
bool g_progress_drawn = false;

void emit_line(const Child& c, const Stream& s, std::string_view line) {
  // Stdout and stderr come through separate pipes: a row may arrive before rank 0's own
  // erase of its progress line, so erase it here before anything else is written.
  if (g_progress_drawn) {
    write_fd(STDERR_FILENO, kEraseLine);
    g_progress_drawn = false;
  }
  const bool passthrough = (s.is_stdout && c.rank == 0) || line.starts_with("ibscope[");
  const std::string prefixed =
      passthrough ? std::string() : fmt::format("[rank {}] {}", c.rank, line);
  const std::string_view text = passthrough ? line : std::string_view(prefixed);
  if (!s.is_stdout) {
    write_fd(STDERR_FILENO, text);
  } else if (stdout_closed() && c.rank == 0 && names_a_file(line)) {
    write_fd(STDERR_FILENO, text);
  } else {
    // A reader that went away (`| head`) costs the rows on screen, never the run.
    write_stdout(text);
  }
}

/// Reads what is available; returns false at EOF.
bool pump(Child& c, Stream& s) {
  char buf[65536];
  const ssize_t n = ::read(s.fd.get(), buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    if (!s.partial.empty()) emit_line(c, s, s.partial + "\n");
    s.partial.clear();
    s.fd.reset();
    return false;
  }
  s.partial.append(buf, static_cast<std::size_t>(n));
  std::size_t start = 0;
  while (true) {
    const auto nl = s.partial.find('\n', start);
    if (nl == std::string::npos) break;
    emit_line(c, s, std::string_view(s.partial).substr(start, nl - start + 1));
    start = nl + 1;
  }
  s.partial.erase(0, start);
  // Rank 0's progress line (output/progress_line.hpp) has no newline: it redraws itself after
  // "\r ESC[2K". Pass it through at once, unprefixed, or it would wait for a line that never
  // comes.
  if (c.rank == 0 && !s.is_stdout && s.partial.starts_with(kEraseLine)) {
    write_fd(STDERR_FILENO, s.partial);
    g_progress_drawn = s.partial.size() > kEraseLine.size();
    s.partial.clear();
  }
  return true;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

bool killed_by_forwarded_signal(int status) {
  return WIFSIGNALED(status) && WTERMSIG(status) < NSIG &&
         g_forwarded.at(static_cast<std::size_t>(WTERMSIG(status)));
}

int exit_code_of(int status) {
  if (killed_by_forwarded_signal(status)) return 128 + WTERMSIG(status);
  if (WIFSIGNALED(status)) return 1;
  return WEXITSTATUS(status);
}

[[noreturn]] void exec_rank(const LocalLaunchOptions& o, int rank, int listen_fd,
                            const std::string& root, const std::string& token, int out_fd,
                            int err_fd, pid_t launcher) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(1);  // the launcher died before prctl took effect
  const bool stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;  // before it becomes a pipe
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  // exec resets the launcher's handlers; a signal the launcher's caller ignores stays ignored
  // (nohup), and the interrupt signals stay blocked until the rank's handlers are installed.
  // Its own process group: a terminal's Ctrl-C reaches the launcher only, which forwards it
  // once; with the ranks in the terminal's group they would get it twice, and the second
  // signal ends a rank at once, before it writes what it measured (core/interrupt.hpp).
  ::setpgid(0, 0);
  ::setenv("IBSCOPE_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("IBSCOPE_SIZE", std::to_string(o.np).c_str(), 1);
  ::setenv("IBSCOPE_ROOT", root.c_str(), 1);
  ::setenv("IBSCOPE_TOKEN", token.c_str(), 1);
  ::setenv("IBSCOPE_BOOTSTRAP", "tcp", 1);
  if (rank == 0) {
    // Rank 0's stderr is a pipe to this launcher; tell it whether the launcher's own stderr is
    // a terminal, where its progress line may be drawn (output/progress_line.cpp).
    if (stderr_is_terminal) ::setenv("IBSCOPE_PROGRESS_TTY", "1", 1);
    ::fcntl(listen_fd, F_SETFD, 0);  // rank 0 inherits the listening socket
    ::setenv("IBSCOPE_ROOT_FD", std::to_string(listen_fd).c_str(), 1);
  } else {
    ::unsetenv("IBSCOPE_ROOT_FD");
    ::unsetenv("IBSCOPE_PROGRESS_TTY");
  }
  std::vector<char*> args;
  for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv("/proc/self/exe", args.data());
  const std::string msg =
      fmt::format("ibscope: local launcher: cannot exec rank {}: {}\n", rank, std::strerror(errno));
  write_fd(STDERR_FILENO, msg);
  ::_exit(127);
}

}  // namespace

std::string make_job_token() { return random_hex(32); }

int run_local_launcher(const LocalLaunchOptions& o) {
  if (o.np < 1) throw UsageError(fmt::format("--np {}: need at least 1 rank", o.np));
  net::Fd listener = net::listen_tcp({"127.0.0.1", 0});
  const std::string root = fmt::format("127.0.0.1:{}", net::bound_port(listener.get()));
  const std::string token = make_job_token();
  const pid_t self = ::getpid();

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  for (int sig : interrupt_signals(o.forward_usr1)) {
    // Ignored by the caller (nohup): neither acted on nor forwarded, and the ranks inherit
    // SIG_IGN.
    if (ignored_by_caller(sig)) {
      keep_ignored(sig);
    } else {
      ::sigaction(sig, &sa, nullptr);
    }
  }

  std::vector<Child> children(static_cast<std::size_t>(o.np));
  // The ranks start with the signals blocked: one forwarded before a rank's handlers exist
  // (a SIGTERM in the first milliseconds) waits for them instead of killing it. Here, a signal
  // that comes during the forks is delivered when they are done, and forwarded by the loop.
  std::optional<BlockedInterruptSignals> blocked(std::in_place, o.forward_usr1);
  for (int r = 0; r < o.np; ++r) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      throw SystemError("local launcher: pipe", errno);
    }
    const pid_t pid = ::fork();
    if (pid < 0) throw SystemError(fmt::format("local launcher: fork rank {}", r), errno);
    if (pid == 0) exec_rank(o, r, listener.get(), root, token, out[1], err[1], self);
    ::close(out[1]);
    ::close(err[1]);
    Child& c = children[static_cast<std::size_t>(r)];
    c.rank = r;
    c.pid = pid;
    c.out.fd = net::Fd(out[0]);
    c.out.is_stdout = true;
    c.err.fd = net::Fd(err[0]);
  }
  listener.reset();  // rank 0 owns it now
  blocked.reset();

  std::optional<Clock::time_point> first_failure;
  bool terminated = false, killed = false;
  int running = o.np;
  int worst = 0;
  while (true) {
    std::vector<pollfd> pfds;
    std::vector<std::pair<Child*, Stream*>> who;
    for (auto& c : children) {
      for (Stream* s : {&c.out, &c.err}) {
        if (s->fd.valid()) {
          pfds.push_back({s->fd.get(), POLLIN, 0});
          who.emplace_back(&c, s);
        }
      }
    }
    if (running == 0 && pfds.empty()) break;
    const int pr = ::poll(pfds.data(), pfds.size(), 100);
    if (pr > 0) {
      for (std::size_t i = 0; i < pfds.size(); ++i) {
        if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) pump(*who[i].first, *who[i].second);
      }
    }
    if (g_forward_signal != 0) {
      const int sig = g_forward_signal;
      g_forward_signal = 0;
      g_forwarded.at(static_cast<std::size_t>(sig)) = true;
      for (auto& c : children)
        if (c.running) ::kill(c.pid, sig);
      if (!first_failure) first_failure = Clock::now();
    }
    for (auto& c : children) {
      if (!c.running) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.running = false;
      c.status = status;
      --running;
      worst = std::max(worst, exit_code_of(status));
      if (exit_code_of(status) != 0 && !terminated) {
        // A rank that exits with a status has said why itself (an error line, or a FAIL
        // verdict every rank returns); one that a signal ended could not, so the launcher does,
        // unless the signal is one it forwarded (a second Ctrl-C): the user knows that one.
        if (WIFSIGNALED(status) && !killed_by_forwarded_signal(status)) {
          log::error("local launcher: rank {} (pid {}) {}", c.rank, c.pid, describe_status(status));
        } else {
          log::debug("local launcher: rank {} (pid {}) {}", c.rank, c.pid, describe_status(status));
        }
        if (!first_failure) first_failure = Clock::now();
      }
    }
    if (first_failure && running > 0) {
      const double since = seconds_between(*first_failure, Clock::now());
      if (!terminated && since > o.timeout_s + kGraceExtraS) {
        log::error(
            "local launcher: {} rank(s) still running {:.0f} s after the first failure; "
            "terminating them",
            running, since);
        for (auto& c : children)
          if (c.running) ::kill(c.pid, SIGTERM);
        terminated = true;
      } else if (terminated && !killed && since > o.timeout_s + kGraceExtraS + kTermToKillS) {
        for (auto& c : children)
          if (c.running) ::kill(c.pid, SIGKILL);
        killed = true;
      }
    }
  }
  return worst;
}

}  // namespace ibscope::bootstrap
