#include "ibscope/job/crash_hook.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"

namespace ibscope::job {
namespace {

constexpr std::string_view kCrashGrammar =
    "<rank>:<batches>[:ABRT|KILL|SEGV] with rank >= 0 and batches >= 1";

}  // namespace

CrashHook parse_crash_hook(std::string_view value) {
  const auto first = value.find(':');
  if (first == std::string_view::npos) {
    parse_hook_integer(kCrashHookVariable, value, "", 0, kCrashGrammar);  // throws
  }
  CrashHook hook;
  hook.rank =
      parse_hook_integer(kCrashHookVariable, value, value.substr(0, first), 0, kCrashGrammar);
  std::string_view rest = value.substr(first + 1);
  const auto second = rest.find(':');
  hook.after_batches =
      parse_hook_integer(kCrashHookVariable, value, rest.substr(0, second), 1, kCrashGrammar);
  const std::string_view sig = second == std::string_view::npos ? "ABRT" : rest.substr(second + 1);
  if (sig == "ABRT") {
    hook.signal = SIGABRT;
  } else if (sig == "KILL") {
    hook.signal = SIGKILL;
  } else if (sig == "SEGV") {
    hook.signal = SIGSEGV;
  } else {
    throw UsageError(fmt::format("{}='{}': the signal must be ABRT, KILL or SEGV, not '{}'",
                                 kCrashHookVariable, value, sig));
  }
  return hook;
}

std::optional<CrashHook> crash_hook_from_env() {
  const char* v = std::getenv(std::string(kCrashHookVariable).c_str());
  if (v == nullptr) return std::nullopt;
  return parse_crash_hook(v);
}

void crash_now(const CrashHook& hook) {
  if (hook.signal == SIGABRT) std::abort();
  std::signal(hook.signal, SIG_DFL);
  std::raise(hook.signal);
  std::abort();  // not reached: KILL and SEGV (default action) end the process
}

}  // namespace ibscope::job
