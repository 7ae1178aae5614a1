#pragma once
/// Pure arithmetic of bandwidth probes (unit-tested).

#include <cstdint>
#include <span>

namespace ibscope::probes {

/// A signalled completion seen at `t_s` seconds after the stream started, when `messages`
/// messages in total had completed.
struct CompletionMark {
  double t_s = 0;
  std::uint64_t messages = 0;
};

/// A peak window lasts at least this fraction of the run.
inline constexpr double kMinWindowFraction = 0.05;

/// The best rate, in messages per second, over any window between two marks that spans at
/// least `min_window_messages` messages and kMinWindowFraction of the run's duration (the "peak"
/// beside the run's average). The whole run is one such window, so the peak is never below the
/// average; no marks give 0.
double peak_message_rate(std::span<const CompletionMark> marks,
                         std::uint64_t min_window_messages) noexcept;

/// Window used for the peak: 5 % of the run's messages, at least one signalling interval.
std::uint64_t peak_window_messages(std::uint64_t total_messages, int signal_every) noexcept;

}  // namespace ibscope::probes
