#include "ibscope/core/interrupt.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

namespace ibscope {

namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_installed{false};

constexpr std::array kAllInterruptSignals{SIGINT, SIGTERM, SIGHUP, SIGUSR1};
// Which of them the process was started with ignored (SIG_IGN survives exec).
std::array<bool, NSIG> g_ignored_at_start{};

// The kernel's disposition, read without the C library: a sanitizer's sigaction (TSan) answers
// from its own table, which knows nothing of what exec kept. The handler is the first member of
// the kernel's struct; the last argument is the size of its signal mask.
bool kernel_ignores(int sig) noexcept {
  struct {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    unsigned long mask;
  } old{};
  return ::syscall(SYS_rt_sigaction, sig, nullptr, &old, sizeof(old.mask)) == 0 &&
         old.handler == SIG_IGN;
}

extern "C" void ibscope_record_ignored_signals(int, char**, char**) {
  for (int sig : kAllInterruptSignals) {
    g_ignored_at_start[static_cast<std::size_t>(sig)] = kernel_ignores(sig);
  }
}

// In .preinit_array, which the dynamic loader runs before the constructors of the shared
// libraries: libucs's installs its debug handler on SIGHUP (UCX_DEBUG_SIGNO) over the SIG_IGN of
// `nohup`, so that by main() the caller's choice can no longer be seen. (Only an executable has a
// .preinit_array; libibscope is a static library linked into each.)
using PreinitFunction = void (*)(int, char**, char**);
__attribute__((section(".preinit_array"), used)) PreinitFunction g_record_ignored_signals =
    ibscope_record_ignored_signals;

std::string& identity() {
  static std::string who = "this rank";
  return who;
}

extern "C" void on_interrupt(int sig) {
  if (g_signal != 0) {
    // The second signal: the default action now (terminate), as if ibscope had no handler.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_signal = sig;
}

sigset_t interrupt_sigset(bool usr1) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : interrupt_signals(usr1)) sigaddset(&set, sig);
  return set;
}

}  // namespace

std::vector<int> interrupt_signals(bool usr1) {
  std::vector<int> sigs{SIGINT, SIGTERM, SIGHUP};
  if (usr1) sigs.push_back(SIGUSR1);
  return sigs;
}

bool ignored_by_caller(int sig) noexcept {
  if (sig > 0 && sig < NSIG && g_ignored_at_start[static_cast<std::size_t>(sig)]) return true;
  return kernel_ignores(sig);
}

void keep_ignored(int sig) noexcept { ::signal(sig, SIG_IGN); }

void install_interrupt_handlers(bool usr1) {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking polls return EINTR and look at the flag
  for (int sig : interrupt_signals(usr1)) {
    // The caller wants it ignored (nohup, a shell's background job): so does ibscope.
    if (ignored_by_caller(sig)) {
      keep_ignored(sig);
    } else {
      ::sigaction(sig, &sa, nullptr);
    }
  }
  // A signal the local launcher forwarded before now was pending: it is recorded here.
  const sigset_t set = interrupt_sigset(usr1);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

BlockedInterruptSignals::BlockedInterruptSignals(bool usr1) {
  const sigset_t set = interrupt_sigset(usr1);
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

BlockedInterruptSignals::~BlockedInterruptSignals() {
  ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

int interrupt_signal() noexcept { return g_signal; }

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return fmt::format("signal {}", sig);
  }
}

void set_interrupt_identity(std::string who) { identity() = std::move(who); }

void throw_if_interrupted() {
  const int sig = g_signal;
  if (sig == 0) return;
  throw InterruptedError(sig, fmt::format("interrupted by {} on {}", signal_name(sig), identity()));
}

void reset_interrupt_for_tests() noexcept { g_signal = 0; }

}  // namespace ibscope
