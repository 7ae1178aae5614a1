#pragma once
/// Per-rank raw data in results files, and what is written instead at scale (results/README.md,
/// "Per-rank data and file size"). Three parts of a results file hold one value per rank and per
/// something else: the straggler arrivals of `ibscope accept` (ranks x iterations per all-reduce
/// row), the soak's RSS per window (ranks x windows) and the UCX lanes per rank pair (ranks^2).
/// Up to kRankSamplesKeptUpToRanks ranks they are written as measured; above it they are written
/// as summaries over ranks (percentiles and the rank that was worst), unless the run was asked
/// to keep them (`--keep-samples`, Document::keep_rank_samples). The summaries are computed
/// here, from the raw data, by pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ibscope::results {

/// Jobs of up to this many ranks keep every per-rank sample without being asked.
inline constexpr std::size_t kRankSamplesKeptUpToRanks = 64;

/// Whether per-rank data over `ranks` ranks is written as a summary. Never throws.
constexpr bool summarise_ranks(std::size_t ranks, bool keep_rank_samples) noexcept {
  return !keep_rank_samples && ranks > kRankSamplesKeptUpToRanks;
}

/// One all-reduce iteration's arrivals over the ranks (µs after the first rank, rank 0's clock).
struct ArrivalSummary {
  int ranks = 0;       ///< ranks whose arrival was recorded (NaN ones left out)
  double p50_us = 0;   ///< median lateness
  double p99_us = 0;   ///< 99th percentile (nearest rank)
  double max_us = 0;   ///< the last rank's lateness
  int last_rank = -1;  ///< the rank that arrived last (-1: none recorded)
  bool operator==(const ArrivalSummary&) const = default;
};

/// One summary per iteration of `arrival_us[iteration][rank]`. Never throws (but bad_alloc).
std::vector<ArrivalSummary> summarise_arrivals(const std::vector<std::vector<double>>& arrival_us);

/// Every rank's resident memory at the end of a soak window, summarised.
struct RssSummary {
  int ranks = 0;
  std::uint64_t min_bytes = 0, p50_bytes = 0, max_bytes = 0;
  int max_rank = -1;  ///< the rank with the most (-1: no ranks)
  bool operator==(const RssSummary&) const = default;
};

RssSummary summarise_rss(const std::vector<std::uint64_t>& rss_bytes);

/// The UCX lanes of the rank pairs that share one description ("a->b" -> lanes, n^2 entries),
/// grouped: the description, how many pairs, and the first pair (in the map's order).
struct TransportClass {
  std::string lanes;
  std::uint64_t pairs = 0;
  std::string example;  ///< "0->1"
  bool operator==(const TransportClass&) const = default;
};

}  // namespace ibscope::results
