#pragma once
/// The console table of every NIC's loopback (accept's preflight, `ibscope probe loopback`):
/// one row per NIC and memory, figures in GB/s (1e9 B/s) and µs, then the verdict's failures
/// and notes.

#include <cstdio>
#include <vector>

#include "ibscope/accept/loopback_verdict.hpp"

namespace ibscope::output {

void print_loopback_table(std::FILE* out, const std::vector<accept::LoopbackVerdict>& verdicts);

}  // namespace ibscope::output
