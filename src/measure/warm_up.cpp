#include "ibscope/measure/warm_up.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::measure {

std::int64_t more_warmup_calls(double min_s, std::int64_t calls, double elapsed_s, int round) {
  if (elapsed_s >= min_s || round >= kMaxWarmupRounds || calls >= kMaxWarmupCalls) return 0;
  if (calls <= 0 || elapsed_s <= 0) return 1;
  const double per_call_s = elapsed_s / static_cast<double>(calls);
  const double wanted = std::ceil((min_s - elapsed_s) / per_call_s);
  // Ask for a little more than the estimate: a short last round costs a whole bootstrap round.
  const double asked = std::max(1.0, std::ceil(wanted * 1.1));
  return static_cast<std::int64_t>(std::min(asked, static_cast<double>(kMaxWarmupCalls - calls)));
}

std::int64_t warm_up_for(bootstrap::Bootstrap& bootstrap, double min_s, std::int64_t first_round,
                         const std::function<void(std::int64_t)>& run_calls,
                         std::string_view what) {
  if (min_s <= 0) return 0;
  const std::string phase = fmt::format("{}: warm-up", what);
  const auto start = Clock::now();
  std::int64_t calls = std::max<std::int64_t>(1, first_round);
  run_calls(calls);
  for (int round = 0;; ++round) {
    std::int64_t more =
        bootstrap.rank() == 0
            ? more_warmup_calls(min_s, calls, seconds_between(start, Clock::now()), round)
            : 0;
    const bootstrap::Bytes told = bootstrap.broadcast(
        std::span(reinterpret_cast<const std::byte*>(&more), sizeof(more)), phase);
    if (told.size() != sizeof(more)) {
      throw RemoteError(fmt::format("{}: malformed warm-up decision from rank 0", phase));
    }
    std::memcpy(&more, told.data(), sizeof(more));
    if (more <= 0) {
      log::debug("{}: {} calls in {} rounds, {:.3f} ms", phase, calls, round + 1,
                 seconds_between(start, Clock::now()) * 1e3);
      return calls;
    }
    run_calls(more);
    calls += more;
  }
}

}  // namespace ibscope::measure
