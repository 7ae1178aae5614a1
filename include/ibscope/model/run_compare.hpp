#pragma once
/// Two runs compared row by row (`ibscope compare A B`; docs/model.md, "Comparing runs"): the
/// change of B against A in median time per call and in bandwidth, a noise band from the rows'
/// own samples, and which rows got slower or faster beyond it. Pure: takes documents already
/// loaded (results/loader.hpp: ibscope results files or nccl-tests outputs).
///
/// The rule, per matched row:
///   change_pct = (t_B - t_A) / t_A x 100, t = the median time per call (a collective row's
///                iteration p50, nccl-tests' time; a p2p row's time p50; a verbs probe row's
///                time p50, or for bandwidth rows size / bw, which keep no time)
///   spread     = 1.4826 x MAD(samples) / median(samples) of each side (0 under 3 samples)
///   band_pct   = max(noise_floor_pct, noise_k x 100 x sqrt(spread_A^2 + spread_B^2))
///   t_B > t_A (1 + band_pct/100): slower (a regression); t_A > t_B (1 + band_pct/100): faster
///   (an improvement; symmetric in the ratio, since a change cannot go below -100 %); else noise.
/// A regression beyond `threshold_pct` as well fails the comparison (exit status 1).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ibscope/results/document.hpp"

namespace ibscope::model {

struct CompareOptions {
  double threshold_pct = 10;   ///< a regression fails the comparison above this change
  double noise_floor_pct = 5;  ///< the band is never narrower than this
  double noise_k = 3;          ///< robust standard deviations (both sides together) in the band
  bool any_algorithm = false;  ///< match collective rows whatever their algorithm and memory
};

enum class RowChange { kNoise, kSlower, kFaster };

struct RowComparison {
  std::string section;  ///< "collective", "p2p" or "probe"
  /// The row without its size: "allreduce/ring/float/sum/p2/out/host",
  /// "p2p/latency/0-1/w1"; with any_algorithm "allreduce/*/float/sum/p2/out".
  std::string key;
  /// What the key hides: a collective row's algorithm on each side ("nccl", "ring"); a p2p or
  /// probe row's hosts ("h0-h2"), the link it crossed.
  std::string a_label, b_label;
  std::uint64_t size_bytes = 0;
  double a_us = 0, b_us = 0;  ///< median time per call
  double change_pct = 0;
  double a_bw_gbps = 0, b_bw_gbps = 0;  ///< busbw (collective) or bw (p2p, probe); 0: none
  double bw_change_pct = 0;             ///< 0 when either side has no bandwidth
  double band_pct = 0;
  RowChange change = RowChange::kNoise;
  bool beyond_threshold = false;  ///< slower by more than threshold_pct (and outside the band)
};

struct RunComparison {
  std::vector<RowComparison> rows;  ///< A's order
  int only_a = 0, only_b = 0;       ///< rows without a match on the other side
  std::vector<std::string> notes;   ///< duplicate keys, rows with #wrong > 0
  int count(RowChange c) const;
  /// Slower rows beyond the threshold: the comparison fails.
  int failures() const;
};

/// 1.4826 x MAD / median of `samples_us` (a relative robust standard deviation); 0 for fewer
/// than 3 samples or a median <= 0.
double relative_spread(std::span<const double> samples_us);

/// Matches every collective, p2p and verbs probe row of `b` to `a`'s and compares them.
/// Throws nothing.
RunComparison compare_runs(const results::Document& a, const results::Document& b,
                           const CompareOptions& options);

}  // namespace ibscope::model
