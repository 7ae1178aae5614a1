#include "ibscope/core/fault_hooks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ibscope/core/error.hpp"

extern char** environ;

namespace ibscope {
namespace {

// Values a results file must not carry: the TCP store admits any client that knows its
// address and this token (docs/security.md), and results files are shared.
constexpr std::array<std::string_view, 1> kSecretVariables{"IBSCOPE_TOKEN"};

}  // namespace

EnvVars env_with_prefix(std::span<const std::string_view> entries, std::string_view prefix) {
  EnvVars out;
  for (const std::string_view kv : entries) {
    if (!kv.starts_with(prefix)) continue;
    const auto eq = kv.find('=');
    out[std::string(kv.substr(0, eq))] =
        eq == std::string_view::npos ? std::string() : std::string(kv.substr(eq + 1));
  }
  return out;
}

EnvVars process_env_with_prefix(std::string_view prefix) {
  std::vector<std::string_view> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return env_with_prefix(entries, prefix);
}

EnvVars recorded_ibscope_env(EnvVars vars) {
  for (const std::string_view secret : kSecretVariables) {
    if (const auto it = vars.find(std::string(secret)); it != vars.end()) {
      it->second = std::string(kRedactedValue);
    }
  }
  return vars;
}

bool is_fault_hook(std::string_view name) noexcept {
  return std::any_of(kFaultHookPrefixes.begin(), kFaultHookPrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

EnvVars fault_hooks_in(const EnvVars& vars) {
  EnvVars out;
  for (const auto& [name, value] : vars) {
    if (is_fault_hook(name)) out[name] = value;
  }
  return out;
}

std::vector<FaultHook> merge_fault_hooks(std::span<const EnvVars> per_rank) {
  std::map<std::pair<std::string, std::string>, std::vector<int>> ranks;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    for (const auto& [name, value] : per_rank[r]) {
      if (is_fault_hook(name)) ranks[{name, value}].push_back(static_cast<int>(r));
    }
  }
  std::vector<FaultHook> out;
  for (auto& [key, on] : ranks) out.push_back(FaultHook{key.first, key.second, std::move(on)});
  return out;
}

std::string describe_fault_hook(const FaultHook& hook, int job_ranks) {
  std::string where;
  if (static_cast<int>(hook.ranks.size()) >= job_ranks) {
    where = "every rank";
  } else if (hook.ranks.size() == 1) {
    where = fmt::format("rank {}", hook.ranks.front());
  } else {
    where = fmt::format("ranks {}", fmt::join(hook.ranks, ", "));
  }
  return fmt::format("{}={} ({})", hook.name, hook.value, where);
}

std::string fault_hook_warning(const FaultHook& hook, int job_ranks) {
  return fmt::format(
      "FAULT HOOK {} is set: a test hook that delays, corrupts or leaks on purpose, so this "
      "run's figures and verdicts are not genuine (accept and soak cannot pass); unset every "
      "IBSCOPE_FAULT_* and IBSCOPE_SOAK_INJECT_* variable for a real measurement "
      "(docs/fault-hooks.md)",
      describe_fault_hook(hook, job_ranks));
}

std::string fault_hook_failure(const FaultHook& hook, int job_ranks) {
  return fmt::format("fault hook {} is set: a run with a test hook never passes (unset it)",
                     describe_fault_hook(hook, job_ranks));
}

void apply_fault_hooks_to_verdict(std::span<const FaultHook> hooks, int job_ranks, bool& pass,
                                  std::vector<std::string>& reasons) {
  for (const auto& h : hooks) {
    pass = false;
    reasons.push_back(fault_hook_failure(h, job_ranks));
  }
}

namespace {

[[noreturn]] void malformed_hook(std::string_view variable, std::string_view value,
                                 std::string_view grammar) {
  throw UsageError(fmt::format("{}='{}': expected {}{}", variable, value, grammar,
                               value.empty() ? " (it is set but empty: unset it for a real "
                                               "measurement)"
                                             : ""));
}

}  // namespace

int parse_hook_integer(std::string_view variable, std::string_view value, std::string_view field,
                       int min, std::string_view grammar) {
  int v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc{} || end != field.data() + field.size() || v < min) {
    malformed_hook(variable, value, grammar);
  }
  return v;
}

double parse_hook_number(std::string_view variable, std::string_view value, std::string_view field,
                         double min, std::string_view grammar) {
  double v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc{} || end != field.data() + field.size() ||
      !std::isfinite(v) || v < min) {
    malformed_hook(variable, value, grammar);
  }
  return v;
}

void check_hook_rank(std::string_view variable, std::string_view value, int rank, int job_ranks) {
  if (rank < 0 || rank >= job_ranks) {
    throw UsageError(fmt::format("{}='{}': rank {} is not a rank of this {}-rank job (0..{})",
                                 variable, value, rank, job_ranks, job_ranks - 1));
  }
}

std::string escape_hook_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out;
}

std::string unescape_hook_value(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\\' || i + 1 == escaped.size()) {
      out += escaped[i];
      continue;
    }
    const char next = escaped[++i];
    out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
  }
  return out;
}

}  // namespace ibscope
