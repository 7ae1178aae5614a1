#include "ibscope/probes/bandwidth_math.hpp"

#include <algorithm>

namespace ibscope::probes {

double peak_message_rate(std::span<const CompletionMark> marks,
                         std::uint64_t min_window_messages) noexcept {
  if (marks.empty()) return 0;
  const double min_window_s = kMinWindowFraction * marks.back().t_s;
  // The stream starts at (0 s, 0 messages): a window may begin there.
  double best = 0;
  std::size_t j = 0;
  const auto at = [&](std::size_t k) -> CompletionMark {
    return k == 0 ? CompletionMark{} : marks[k - 1];
  };
  const std::size_t n = marks.size() + 1;
  for (std::size_t i = 0; i < n; ++i) {
    j = std::max(j, i + 1);
    // Completions are observed in bursts (a poll returns several at once), so a window must
    // also last long enough that its end points' observation delays do not dominate it.
    while (j < n && (at(j).messages - at(i).messages < min_window_messages ||
                     at(j).t_s - at(i).t_s < min_window_s)) {
      ++j;
    }
    if (j >= n) break;
    const double dt = at(j).t_s - at(i).t_s;
    if (dt > 0) best = std::max(best, static_cast<double>(at(j).messages - at(i).messages) / dt);
  }
  // The whole run is a window too, and the only one whose both ends are exact when several
  // QPs share the marks (a mark's count is a lower bound: other QPs' unsignalled messages
  // may have completed already).
  if (marks.back().t_s > 0) {
    best = std::max(best, static_cast<double>(marks.back().messages) / marks.back().t_s);
  }
  return best;
}

std::uint64_t peak_window_messages(std::uint64_t total_messages, int signal_every) noexcept {
  return std::max<std::uint64_t>(total_messages / 20,
                                 static_cast<std::uint64_t>(std::max(signal_every, 1)));
}

}  // namespace ibscope::probes
