#include "pattern_section.hpp"

namespace ibscope::accept {

bool add_pattern_verdicts(const std::vector<results::AcceptPattern>& patterns, AcceptResult& out) {
  bool pass = true;
  for (const results::AcceptPattern& p : patterns) {
    if (!p.pass) {
      pass = false;
      out.failures.push_back("pattern " + p.reason);
    }
    if (!p.congestion.empty()) out.warnings.push_back("congestion: pattern " + p.congestion);
  }
  out.section.patterns = patterns;
  return pass;
}

}  // namespace ibscope::accept
