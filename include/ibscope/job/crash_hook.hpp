#pragma once
/// Test fault hook IBSCOPE_FAULT_CRASH_RANK=<rank>:<batches>[:<ABRT|KILL|SEGV>]: that rank
/// dies by the signal (ABRT by default, through abort() as a library's assertion does) right
/// after the job recorded its <batches>-th batch of rows (a sweep records one batch per message
/// size, a soak one per window) and rank 0 checkpointed it. The crash tests' way to die at a
/// known point mid-run (docs/fault-hooks.md); like every IBSCOPE_FAULT_* hook it is named in the
/// banner and the results (core/fault_hooks.hpp).

#include <optional>
#include <string_view>

namespace ibscope::job {

inline constexpr std::string_view kCrashHookVariable = "IBSCOPE_FAULT_CRASH_RANK";

struct CrashHook {
  int rank = 0;
  int after_batches = 1;  ///< >= 1
  int signal = 0;         ///< SIGABRT, SIGKILL or SIGSEGV
};

/// Parses the variable's value. Throws UsageError naming the variable and the expected form.
CrashHook parse_crash_hook(std::string_view value);
/// The hook from this process's environment; empty when the variable is not set.
std::optional<CrashHook> crash_hook_from_env();
/// Dies by hook.signal now. Never returns.
[[noreturn]] void crash_now(const CrashHook& hook);

}  // namespace ibscope::job
