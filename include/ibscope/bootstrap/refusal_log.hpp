#pragma once
/// Rate-limited log of the connections the TCP store refuses. Every refusal is counted; the
/// first few of each kind are logged one line each, naming the peer and the reason ("bootstrap:
/// refused 127.0.0.1:40112: wrong job token"); later ones only add to a count that a summary
/// line reports at most every `summary_every_s` and once more at the end, so that a flood of
/// strangers cannot fill a terminal or a disk. Pure: time is passed in, lines go to a sink.

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "ibscope/core/clock.hpp"

namespace ibscope::bootstrap {

enum class RefusalKind : std::size_t {
  kNoToken = 0,  ///< a hello with an empty token to a job that has one
  kWrongToken,   ///< a hello with another token
  kWrongJob,     ///< right token, but a job size, rank or duplicate rank that does not fit
  kMalformed,    ///< bytes that do not parse, an oversized length, not a hello first
  kStalled,      ///< no complete hello within the deadline (silent, or one byte at a time)
  kFlood,        ///< dropped because too many unauthenticated connections were waiting
  kGuessing,     ///< its source had too many wrong tokens checked lately (guess_limiter.hpp)
};
inline constexpr std::size_t kRefusalKinds = 7;

/// "no token", "wrong token", ... (used in summaries).
std::string_view refusal_kind_name(RefusalKind kind) noexcept;

class RefusalLog {
 public:
  using Sink = std::function<void(const std::string& line)>;

  /// `first_per_kind` lines per kind are written in full; `summary_every_s` bounds how often
  /// a summary of the rest is written.
  RefusalLog(int first_per_kind, double summary_every_s, Sink sink);

  /// Counts one refusal and logs it if it is among the first of its kind.
  void refused(RefusalKind kind, std::string_view peer, std::string_view why,
               Clock::time_point now);
  /// Writes a summary of the refusals not logged one by one since the last summary, if there
  /// are any and `summary_every_s` has passed (or `force`).
  void flush(Clock::time_point now, bool force = false);

  int total() const noexcept { return total_; }
  int count(RefusalKind kind) const noexcept { return counts_[static_cast<std::size_t>(kind)]; }

 private:
  int first_per_kind_;
  double summary_every_s_;
  Sink sink_;
  int total_ = 0;
  std::array<int, kRefusalKinds> counts_{};
  std::array<int, kRefusalKinds> unlogged_{};  // since the last summary
  Clock::time_point last_summary_{};           // or of the first refusal
};

}  // namespace ibscope::bootstrap
