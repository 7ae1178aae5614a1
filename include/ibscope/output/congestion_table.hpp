#pragma once
/// The console table of `ibscope accept --congestion`: one line per victim metric and
/// congestor with its isolated and congested figures, GPCNet's impact factor and the verdict.

#include <string>

#include "ibscope/results/acceptance.hpp"

namespace ibscope::output {

/// Lines ending in '\n', a header first; then one line per congestor's load.
std::string congestion_table(const results::AcceptCongestion& c);

}  // namespace ibscope::output
