#pragma once
/// When each model chunk's data-parallel communication can run in Megatron-LM's interleaved
/// 1F1B schedule (p stages, v chunks per stage, m micro-batches), and how much of it the step
/// waits for. Pure arithmetic on seconds; no network. Rules: docs/model.md, "Overlap rule".
///
/// On a pipeline rank, micro-batch units (one micro-batch through one chunk) run in groups of
/// p per chunk: forward chunks 0, 1, ..., v-1, 0, ...; backward chunks v-1, ..., 0, v-1, ...
/// So in the cool-down chunk j's last backward unit is followed by j p backward units (chunks
/// j-1 .. 0), and in the next step chunk j's first forward unit is preceded by j p forward
/// units (chunks 0 .. j-1). With v = 1 both reduce to one micro-batch's backward (forward).

#include <span>
#include <vector>

namespace ibscope::model {

/// One communication call on the data-parallel stream: `at_s` is when it may start (a
/// gradient bucket being ready) or when it is due (parameters needed), relative to a
/// reference time, and `call_s` how long it takes. Calls run one after another.
struct TimedCall {
  double at_s = 0;
  double call_s = 0;
};

/// The first stage's schedule as the overlap windows see it. Seconds are wall time on one GPU.
struct ChunkSchedule {
  int stages = 1;              ///< p
  int chunks = 1;              ///< v (model chunks per pipeline rank)
  int microbatches = 1;        ///< m
  double forward_unit_s = 0;   ///< one micro-batch's forward through one chunk
  double backward_unit_s = 0;  ///< one micro-batch's backward through one chunk
  double cooldown_idle_s = 0;  ///< pipeline idle the first stage spends in its cool-down
};

/// Backward units of the first stage's cool-down (after its last forward):
/// min(m v, 2 (p - 1) + (v - 1) p), Megatron-LM's warm-up count for rank 0.
int cooldown_units(const ChunkSchedule& s) noexcept;
/// Seconds from the end of chunk j's last backward unit to the end of the first stage's
/// backward pass: j p backward units, each with its share cooldown_idle_s / cooldown_units of
/// the cool-down's idle. Requires 0 <= j < chunks.
double reduce_window_s(const ChunkSchedule& s, int chunk) noexcept;
/// Seconds of the next step's forward before chunk j's first forward unit: j p forward units.
double gather_window_s(const ChunkSchedule& s, int chunk) noexcept;

/// Gradient-reduction calls, time 0 = the end of the backward pass. Chunk j's buckets
/// (`chunk_bucket_s[j]`, seconds per call) become ready during chunk j's last backward unit:
/// bucket k (1..n) when k/n of it has run, i.e. at -reduce_window_s(j) - (1 - k/n) backward
/// unit. Ordered by readiness (chunk v-1 first).
std::vector<TimedCall> reduce_calls(const ChunkSchedule& s,
                                    std::span<const std::vector<double>> chunk_bucket_s);
/// Parameter-gather calls, time 0 = the start of the next step's forward. Chunk j's bucket
/// k (1..n) is due when (k-1)/n of chunk j's first forward unit has run:
/// gather_window_s(j) + (k-1)/n forward unit. Ordered by need (chunk 0 first).
std::vector<TimedCall> gather_calls(const ChunkSchedule& s,
                                    std::span<const std::vector<double>> chunk_bucket_s);

/// Seconds past time 0 that calls starting no earlier than their `at_s` (in order, one at a
/// time) end; 0 when they all end by time 0. Before time 0 the calls share their links with
/// the computation's own traffic and progress at (1 - load) of their speed (`call_s` is the
/// time alone); after it they run alone. load in [0, 1).
double exposed_after_ready(std::span<const TimedCall> calls, double load = 0) noexcept;
/// The delay D of the computation needed so that calls issued at time 0, one after another in
/// order, each end by D + its `at_s` (due time); 0 when they all arrive in time. While the
/// computation waits (before D) the calls run alone, after it at (1 - load) of their speed.
/// Exact for load 0 (max over k of the k-th end minus its due time), else by bisection to a
/// relative 1e-12.
double exposed_before_due(std::span<const TimedCall> calls, double load = 0) noexcept;

}  // namespace ibscope::model
