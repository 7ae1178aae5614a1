#pragma once
/// Test fault hooks: environment variables that make a run misbehave on purpose (a rank that
/// sleeps inside the timed region, a result with a flipped bit, memory leaked during a soak) so
/// that the tests can prove the checks fail. Which variables are hooks is defined here alone, by
/// prefix: every IBSCOPE_FAULT_* or IBSCOPE_SOAK_INJECT_* variable that is set, whatever its
/// value (an empty one too), so a hook added later is covered by its name. Every measuring
/// command records the IBSCOPE_* variables in the results' environment, warns of each hook in
/// its banner and the results' warnings, and `accept` and `soak` never pass while one is set
/// (docs/fault-hooks.md). Pure, except process_env_with_prefix, which reads `environ`.

#include <array>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope {

/// Variables by name.
using EnvVars = std::map<std::string, std::string>;

/// A variable whose name starts with one of these is a fault hook.
inline constexpr std::array<std::string_view, 2> kFaultHookPrefixes{"IBSCOPE_FAULT_",
                                                                    "IBSCOPE_SOAK_INJECT_"};

/// What a results file records instead of a secret's value.
inline constexpr std::string_view kRedactedValue = "(set; value not recorded)";

/// The entries of an environment block ("NAME=value", as `environ` holds them) whose name
/// starts with `prefix`; an entry without '=' has the value "".
EnvVars env_with_prefix(std::span<const std::string_view> entries, std::string_view prefix);

/// env_with_prefix over this process's environment.
EnvVars process_env_with_prefix(std::string_view prefix);

/// The IBSCOPE_* variables as a results file records them: a secret (IBSCOPE_TOKEN, the TCP
/// store's job token) keeps its name, its value becomes kRedactedValue.
EnvVars recorded_ibscope_env(EnvVars vars);

bool is_fault_hook(std::string_view name) noexcept;

/// The fault hooks among `vars`.
EnvVars fault_hooks_in(const EnvVars& vars);

/// A hook as a job found it: set to `value` on `ranks`.
struct FaultHook {
  std::string name, value;
  std::vector<int> ranks;  ///< ascending

  bool operator==(const FaultHook&) const = default;
};

/// The job's hooks from each rank's (per_rank[r]: rank r's fault_hooks_in), by name, then
/// value: a hook set to different values on different ranks gives one entry per value.
std::vector<FaultHook> merge_fault_hooks(std::span<const EnvVars> per_rank);

/// "IBSCOPE_FAULT_DELAY_RANK=2:4000", then " (every rank)" or " (ranks 1, 3)" of `job_ranks`.
std::string describe_fault_hook(const FaultHook& hook, int job_ranks);

/// The banner's and the results' warning for one hook: names it, says the run is not genuine,
/// and how to be rid of it.
std::string fault_hook_warning(const FaultHook& hook, int job_ranks);

/// Why a verdict (accept, soak) is FAIL while `hook` is set.
std::string fault_hook_failure(const FaultHook& hook, int job_ranks);

/// The hook rule of every verdict (soak's, accept's): a hook forges what was measured, so no
/// verdict of a run with one passes. With `hooks` set, clears `pass` and appends one reason per
/// hook (fault_hook_failure) to `reasons`; without, leaves both as they are.
void apply_fault_hooks_to_verdict(std::span<const FaultHook> hooks, int job_ranks, bool& pass,
                                  std::vector<std::string>& reasons);

/// Parsing a hook's value as a flag's is parsed: `field`, one field of `variable`'s `value`, as
/// a decimal integer (nothing else around it) >= `min`, or a finite number >= `min`. Throws
/// UsageError "VARIABLE='value': expected <grammar>" otherwise (an empty value too).
int parse_hook_integer(std::string_view variable, std::string_view value, std::string_view field,
                       int min, std::string_view grammar);
double parse_hook_number(std::string_view variable, std::string_view value, std::string_view field,
                         double min, std::string_view grammar);
/// Throws UsageError unless 0 <= rank < job_ranks: a hook on a rank the job does not have would
/// do nothing, silently.
void check_hook_rank(std::string_view variable, std::string_view value, int rank, int job_ranks);

/// A hook's value on one line of the job's exchange of hooks: '\\', newline and tab escaped
/// (the lines are tab-separated); unescape_hook_value reverses it.
std::string escape_hook_value(std::string_view value);
std::string unescape_hook_value(std::string_view escaped);

}  // namespace ibscope
