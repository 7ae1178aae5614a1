#include "ibscope/cli/crash_hook.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "ibscope/core/error.hpp"

namespace ibscope::cli {
namespace {

int parse_int_field(std::string_view text, std::string_view value, int min) {
  int v = 0;
  const std::string s(text);
  std::size_t used = 0;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || v < min) {
    throw UsageError(
        fmt::format("{}='{}': expected <rank>:<batches>[:ABRT|KILL|SEGV] with rank "
                    ">= 0 and batches >= 1",
                    kCrashHookVariable, value));
  }
  return v;
}

}  // namespace

CrashHook parse_crash_hook(std::string_view value) {
  const auto first = value.find(':');
  if (first == std::string_view::npos) parse_int_field("", value, 0);  // throws
  CrashHook hook;
  hook.rank = parse_int_field(value.substr(0, first), value, 0);
  std::string_view rest = value.substr(first + 1);
  const auto second = rest.find(':');
  hook.after_batches = parse_int_field(rest.substr(0, second), value, 1);
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

}  // namespace ibscope::cli
