#pragma once
/// The deadline of a busy-poll loop. tick() is called on every poll; every few thousand polls
/// it reads the clock and asks the bootstrap whether the job is failing. Past the deadline it
/// throws TimeoutError naming this rank, its host, the peer and how far the loop got, so a
/// dead or stalled peer never hangs a probe.

#include <cstdint>
#include <string>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/clock.hpp"

namespace ibscope::probes {

class ProgressGuard {
 public:
  /// `what`: "rank 0 (host a): write_bw 64 KiB towards peer rank 1 (host b)".
  ProgressGuard(bootstrap::Bootstrap* bootstrap, double timeout_s, std::string what);

  /// Records progress ("37 of 5000 <unit> complete" in the timeout message) and restarts the
  /// deadline: it bounds the time without progress, not the whole run.
  void progress(std::uint64_t done, std::uint64_t total, const char* unit) noexcept {
    done_ = done;
    total_ = total;
    unit_ = unit;
    reset();
  }

  void tick() {
    if (++polls_ < kPollsPerCheck) return;
    polls_ = 0;
    check();
  }
  /// Checks the deadline and the job's health now (for loops that sleep between polls).
  void check();
  /// Restarts the deadline (call when progress was made after a long phase).
  void reset() noexcept { deadline_ = Clock::now() + timeout_; }

 private:
  static constexpr std::uint32_t kPollsPerCheck = 1024;

  bootstrap::Bootstrap* bootstrap_;
  Clock::duration timeout_;
  double timeout_s_;
  Clock::time_point deadline_;
  std::string what_;
  std::uint64_t done_ = 0, total_ = 0;
  const char* unit_ = "messages";
  std::uint32_t polls_ = 0;
};

}  // namespace ibscope::probes
