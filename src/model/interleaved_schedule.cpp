#include "ibscope/model/interleaved_schedule.hpp"

#include <algorithm>

namespace ibscope::model {

int cooldown_units(const ChunkSchedule& s) noexcept {
  const int warmup = 2 * (s.stages - 1) + (s.chunks - 1) * s.stages;
  return std::max(1, std::min(s.microbatches * s.chunks, warmup));
}

double reduce_window_s(const ChunkSchedule& s, int chunk) noexcept {
  // The first stage starts every micro-batch and so never waits in its warm-up: its share of
  // the bubble is spent waiting for gradients in the cool-down, spread here over its units.
  const int after = std::min(chunk * s.stages, cooldown_units(s));
  const double idle_per_unit = s.cooldown_idle_s / cooldown_units(s);
  return chunk * s.stages * s.backward_unit_s + after * idle_per_unit;
}

double gather_window_s(const ChunkSchedule& s, int chunk) noexcept {
  return chunk * s.stages * s.forward_unit_s;
}

std::vector<TimedCall> reduce_calls(const ChunkSchedule& s,
                                    std::span<const std::vector<double>> chunk_bucket_s) {
  std::vector<TimedCall> calls;
  for (int j = static_cast<int>(chunk_bucket_s.size()) - 1; j >= 0; --j) {
    const auto& buckets = chunk_bucket_s[static_cast<std::size_t>(j)];
    const auto n = static_cast<double>(buckets.size());
    const double end = -reduce_window_s(s, j);
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      const double done = static_cast<double>(k + 1) / n;
      calls.push_back({end - (1 - done) * s.backward_unit_s, buckets[k]});
    }
  }
  return calls;
}

std::vector<TimedCall> gather_calls(const ChunkSchedule& s,
                                    std::span<const std::vector<double>> chunk_bucket_s) {
  std::vector<TimedCall> calls;
  for (std::size_t j = 0; j < chunk_bucket_s.size(); ++j) {
    const auto& buckets = chunk_bucket_s[j];
    const auto n = static_cast<double>(buckets.size());
    const double start = gather_window_s(s, static_cast<int>(j));
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      calls.push_back({start + static_cast<double>(k) / n * s.forward_unit_s, buckets[k]});
    }
  }
  return calls;
}

namespace {

// Links shared with the computation's traffic leave a call this fraction of its speed; a
// load of 1 cannot happen (the traffic is part of the windows' wall time) but is kept finite.
double rate_of(double load) noexcept { return 1 - std::clamp(load, 0.0, 0.999); }

// End of `work` seconds (alone) started at `start`, at full speed before `switch_s` and at
// `rate_before` .. `rate_after` on either side of it.
double finish(double start, double work, double switch_s, double rate_before,
              double rate_after) noexcept {
  if (start >= switch_s) return start + work / rate_after;
  const double possible = (switch_s - start) * rate_before;
  if (work <= possible) return start + work / rate_before;
  return switch_s + (work - possible) / rate_after;
}

// Whether calls issued at 0 all end by delay + their due time.
bool in_time(std::span<const TimedCall> calls, double delay, double rate) noexcept {
  double end = 0;
  for (const TimedCall& c : calls) {
    end = finish(end, c.call_s, delay, 1, rate);
    if (end > delay + c.at_s) return false;
  }
  return true;
}

}  // namespace

double exposed_after_ready(std::span<const TimedCall> calls, double load) noexcept {
  if (calls.empty()) return 0;
  const double rate = rate_of(load);
  double end = calls.front().at_s;
  for (const TimedCall& c : calls) end = finish(std::max(end, c.at_s), c.call_s, 0, rate, 1);
  return std::max(0.0, end);
}

double exposed_before_due(std::span<const TimedCall> calls, double load) noexcept {
  const double rate = rate_of(load);
  // Alone all the time: the exact lower bound; slowed all the time: an upper bound.
  double lo = 0;
  double hi = 0;
  double end_alone = 0;
  double end_slowed = 0;
  for (const TimedCall& c : calls) {
    end_alone += c.call_s;
    end_slowed += c.call_s / rate;
    lo = std::max(lo, end_alone - c.at_s);
    hi = std::max(hi, end_slowed - c.at_s);
  }
  if (load <= 0 || in_time(calls, lo, rate)) return lo;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (in_time(calls, mid, rate) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace ibscope::model
