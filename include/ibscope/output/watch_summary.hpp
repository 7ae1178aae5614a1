#pragma once
/// The per-NIC table `ibscope watch -- CMD` prints when the command ends (and `ibscope watch`
/// when stopped): what each NIC moved, its average and peak rate, what its error, congestion and
/// flap counters grew by, then the findings (docs/counters.md, "ibscope watch"). Pure: text out.

#include <string>

#include "ibscope/fabric/watch_state.hpp"

namespace ibscope::output {

/// The summary of `state` for `host`: a header line, one row per NIC (MB = 1e6 B), then the
/// findings over the whole watch, one line each, or "no findings". Ends with a newline.
std::string watch_summary(const fabric::WatchState& state, const std::string& host);

}  // namespace ibscope::output
