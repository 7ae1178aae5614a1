#include "ibscope/probes/progress_guard.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"

namespace ibscope::probes {

ProgressGuard::ProgressGuard(bootstrap::Bootstrap* bootstrap, double timeout_s, std::string what)
    : bootstrap_(bootstrap),
      timeout_(
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))),
      timeout_s_(timeout_s),
      deadline_(Clock::now() + timeout_),
      what_(std::move(what)) {}

void ProgressGuard::check() {
  if (bootstrap_ != nullptr) bootstrap_->check_health();
  if (Clock::now() < deadline_) return;
  const std::string progress = total_ > 0
                                   ? fmt::format("{} of {} {} complete", done_, total_, unit_)
                                   : fmt::format("{} {}", done_, unit_);
  throw TimeoutError(
      fmt::format("{}: no progress within {:g} s ({}); the peer or the link "
                  "stalled",
                  what_, timeout_s_, progress));
}

}  // namespace ibscope::probes
