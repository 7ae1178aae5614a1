#include "ibscope/probes/slow_nic_hook.hpp"

#include <cstdlib>

#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"

namespace ibscope::probes {

SlowNic parse_slow_nic(std::string_view value) {
  constexpr std::string_view kGrammar = "<device>:<microseconds>, microseconds >= 0";
  const auto colon = value.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    parse_hook_integer(kSlowNicVariable, value, "", 0, kGrammar);  // throws
  }
  SlowNic s;
  s.device = std::string(value.substr(0, colon));
  s.delay_us = parse_hook_number(kSlowNicVariable, value, value.substr(colon + 1), 0, kGrammar);
  return s;
}

double slow_nic_delay_us(std::string_view device) {
  // Parsed once; a malformed value is remembered and reported at every use.
  static const std::optional<std::string> value = []() -> std::optional<std::string> {
    const char* v = std::getenv(std::string(kSlowNicVariable).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }();
  if (!value) return 0;
  const SlowNic s = parse_slow_nic(*value);
  return s.device == device ? s.delay_us : 0;
}

}  // namespace ibscope::probes
