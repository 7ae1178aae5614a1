#pragma once
// Internal to accept/: the --pattern verdicts in the acceptance section and on the console.

#include <vector>

#include "ibscope/accept/accept_runner.hpp"
#include "ibscope/results/accept_pattern.hpp"

namespace ibscope::accept {

/// Puts `patterns` in the section, one failure line per failed round (naming the hub and the
/// flows) and one warning per congestion finding. False when a round failed.
bool add_pattern_verdicts(const std::vector<results::AcceptPattern>& patterns, AcceptResult& out);

}  // namespace ibscope::accept
