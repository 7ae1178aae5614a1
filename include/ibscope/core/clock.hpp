#pragma once
/// Time: steady_clock everywhere a duration is measured, and Deadline for every wait.

#include <chrono>

namespace ibscope {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point start, Clock::time_point end) noexcept {
  return std::chrono::duration<double>(end - start).count();
}

/// A point in time after which a wait gives up. Default-constructed = never expires.
class Deadline {
 public:
  Deadline() noexcept : at_(Clock::time_point::max()), budget_s_(0) {}
  explicit Deadline(double seconds_from_now) : Deadline(seconds_from_now, Clock::now()) {}
  /// `seconds` after `start`: a timed loop that has just read the clock saves a second read.
  Deadline(double seconds, Clock::time_point start)
      : at_(start +
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))),
        budget_s_(seconds) {}

  bool expired() const noexcept { return Clock::now() >= at_; }
  /// Seconds left, never negative.
  double remaining_s() const noexcept {
    if (at_ == Clock::time_point::max()) return 1e9;
    const double left = seconds_between(Clock::now(), at_);
    return left > 0 ? left : 0;
  }
  /// The budget this deadline was created with, for messages ("after 60 s").
  double budget_s() const noexcept { return budget_s_; }
  Clock::time_point at() const noexcept { return at_; }

 private:
  Clock::time_point at_;
  double budget_s_;
};

}  // namespace ibscope
