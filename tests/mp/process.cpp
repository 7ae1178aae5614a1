#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ibscope::test {
namespace {

ResultsObserver& results_observer() {
  static ResultsObserver observer = nullptr;
  return observer;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string ibscope_binary() { return IBSCOPE_BINARY; }

Running start_process(const ProcessSpec& spec) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  const std::string binary = spec.binary.empty() ? ibscope_binary() : spec.binary;
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  // A signal sent right after the fork waits until the child has dropped the test's handlers
  // (Catch2's would report a fatal error from the child).
  constexpr int kResetSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGPIPE};
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    // The signals as an interactive shell's child has them, whatever ran the tests (a script's
    // background job ignores SIGINT, nohup SIGHUP): ibscope keeps what its caller ignores.
    for (int sig : kResetSignals) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);  // own process group: the whole job can be killed at the time limit
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (const auto& [k, v] : spec.env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    std::fprintf(stderr, "exec %s failed: %s\n", binary.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(out[1]);
  ::close(err[1]);
  return Running{pid, out[0], err[0], spec.limit_s, now_s()};
}

ProcessResult wait_process(Running& r) {
  ProcessResult res;
  res.pid = r.pid;
  bool out_open = true, err_open = true;
  char buf[65536];
  int status = 0;
  bool exited = false;
  while (out_open || err_open || !exited) {
    const double elapsed = now_s() - r.started_s;
    if (elapsed > r.limit_s && !res.timed_out) {
      res.timed_out = true;
      ::kill(-r.pid, SIGKILL);
    }
    pollfd pfds[2] = {{out_open ? r.out_fd : -1, POLLIN, 0}, {err_open ? r.err_fd : -1, POLLIN, 0}};
    ::poll(pfds, 2, 50);
    for (int i = 0; i < 2; ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(pfds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? res.out : res.err).append(buf, static_cast<std::size_t>(n));
      }
    }
    if (!exited && ::waitpid(r.pid, &status, WNOHANG) == r.pid) exited = true;
  }
  ::close(r.out_fd);
  ::close(r.err_fd);
  // Whatever the job left in its process group dies with the test.
  ::kill(-r.pid, SIGKILL);
  res.elapsed_s = now_s() - r.started_s;
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (results_observer() != nullptr) {
    const std::string path = results_path(res);
    std::error_code ec;
    if (!path.empty() && std::filesystem::is_regular_file(path, ec)) results_observer()(path);
  }
  return res;
}

void set_results_observer(ResultsObserver observer) { results_observer() = observer; }

ProcessResult run_process(const ProcessSpec& spec) {
  Running r = start_process(spec);
  return wait_process(r);
}

ProcessResult run_cli(std::vector<std::string> args, double limit_s) {
  return run_process({std::move(args), {}, limit_s, ""});
}

std::vector<int> children_of(int pid) {
  std::vector<int> out;
  const std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
  std::ifstream in(path);
  for (int c; in >> c;) out.push_back(c);
  return out;
}

namespace {

int rank_of_pid(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto pos = all.find("IBSCOPE_RANK=");
  return pos == std::string::npos ? -1 : std::atoi(all.c_str() + pos + 13);
}

}  // namespace

KilledRun kill_rank_and_wait(Running& job, int victim) {
  const auto killed_at = std::chrono::steady_clock::now();
  ::kill(victim, SIGKILL);
  KilledRun out{wait_process(job), 0};
  out.after_kill_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  return out;
}

int rank_pid(const Running& job, int rank) {
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int pid : children_of(job.pid)) {
      if (rank_of_pid(pid) == rank) return pid;
    }
  }
  return -1;
}

std::string results_path(const ProcessResult& r) {
  static const std::regex re(R"(# (?:partial results \(incomplete\)|results): (\S+))");
  std::smatch m;
  for (const std::string* s : {&r.out, &r.err}) {
    if (std::regex_search(*s, m, re)) return m[1].str();
  }
  return "";
}

std::string make_temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ibscope-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

}  // namespace ibscope::test
