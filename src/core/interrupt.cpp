#include "ibscope/core/interrupt.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace ibscope {

namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_installed{false};
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

}  // namespace

void install_interrupt_handlers(bool usr1) {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking polls return EINTR and look at the flag
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  if (usr1) ::sigaction(SIGUSR1, &sa, nullptr);
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
