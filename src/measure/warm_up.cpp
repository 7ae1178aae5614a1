#include "ibscope/measure/warm_up.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::measure {

std::int64_t more_warmup_calls(double min_s, const WarmupRound& last) {
  if (last.index >= kMaxWarmupRounds || last.total_calls >= kMaxWarmupCalls) return 0;
  if (last.index >= 1 && last.seconds >= min_s) return 0;
  if (last.calls <= 0 || last.seconds <= 0) return 1;
  const double per_call_s = last.seconds / static_cast<double>(last.calls);
  // A little more than the estimate: a round that falls short costs another bootstrap round.
  const double asked = std::max(1.0, std::ceil(min_s / per_call_s * 1.1));
  return static_cast<std::int64_t>(
      std::min(asked, static_cast<double>(kMaxWarmupCalls - last.total_calls)));
}

std::int64_t settle_calls(double min_s, const WarmupRound& last) {
  if (last.calls <= 0 || last.seconds <= 0 || min_s <= 0) return 0;
  const double per_call_s = last.seconds / static_cast<double>(last.calls);
  const double asked = std::floor(kSettleShare * min_s / per_call_s);
  return static_cast<std::int64_t>(std::min(
      asked, static_cast<double>(std::max<std::int64_t>(0, kMaxWarmupCalls - last.total_calls))));
}

std::int64_t warm_up_for(bootstrap::Bootstrap& bootstrap, double min_s,
                         const std::function<void(std::int64_t)>& run_calls,
                         std::string_view what) {
  if (min_s <= 0) return 0;
  const std::string phase = fmt::format("{}: warm-up", what);
  const auto start = Clock::now();
  WarmupRound round{.index = 0, .calls = 1, .seconds = 0, .total_calls = 1};
  auto round_start = Clock::now();
  run_calls(round.calls);
  while (true) {
    round.seconds = seconds_between(round_start, Clock::now());
    // > 0: another round of that many calls; <= 0: warm, then -more settle calls.
    std::int64_t more = 0;
    if (bootstrap.rank() == 0) {
      more = more_warmup_calls(min_s, round);
      if (more == 0) more = -settle_calls(min_s, round);
    }
    const bootstrap::Bytes told = bootstrap.broadcast(
        std::span(reinterpret_cast<const std::byte*>(&more), sizeof(more)), phase);
    if (told.size() != sizeof(more)) {
      throw RemoteError(fmt::format("{}: malformed warm-up decision from rank 0", phase));
    }
    std::memcpy(&more, told.data(), sizeof(more));
    if (more <= 0) {
      run_calls(-more);
      log::debug("{}: {} calls in {} rounds and {} to settle, {:.3f} ms", phase, round.total_calls,
                 round.index + 1, -more, seconds_between(start, Clock::now()) * 1e3);
      return round.total_calls - more;
    }
    round_start = Clock::now();
    run_calls(more);
    round = WarmupRound{.index = round.index + 1,
                        .calls = more,
                        .seconds = 0,
                        .total_calls = round.total_calls + more};
  }
}

}  // namespace ibscope::measure
