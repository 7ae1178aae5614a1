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

double exposed_after_ready(std::span<const TimedCall> calls) noexcept {
  if (calls.empty()) return 0;
  double end = calls.front().at_s;
  for (const TimedCall& c : calls) end = std::max(end, c.at_s) + c.call_s;
  return std::max(0.0, end);
}

double exposed_before_due(std::span<const TimedCall> calls) noexcept {
  double end = 0;
  double delay = 0;
  for (const TimedCall& c : calls) {
    end += c.call_s;
    delay = std::max(delay, end - c.at_s);
  }
  return delay;
}

}  // namespace ibscope::model
