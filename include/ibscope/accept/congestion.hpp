#pragma once
/// `ibscope accept --congestion`: what congestion does to the traffic of others, after GPCNet
/// (Chunduri et al., "GPCNet: Designing a Benchmark Suite for Inducing and Measuring Contention
/// in HPC Networks", SC'19). A fraction of the hosts are *victims*: they measure 8 B ping-pong
/// latency between victim pairs and all-reduce bus bandwidth among themselves, first alone
/// (isolated), then while the other hosts (*congestors*) run a congestor pattern continuously.
/// The impact factor of a victim metric is GPCNet's: congested / isolated for a latency,
/// isolated / congested for a bandwidth (> 1: congestion made it worse). Pure: the split, the
/// figures and the verdict, no transport (the phase itself: accept/congestion_phase.hpp).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope::accept {

/// GPCNet's two-sided congestors: incast (every congestor sends to the first congestor),
/// all-to-all (every congestor to every other), broadcast (the first congestor to every other,
/// one to many).
enum class CongestorPattern { kIncast, kAlltoall, kBroadcast };

/// "incast", "alltoall", "broadcast".
std::string_view name_of(CongestorPattern p) noexcept;
/// "all" (every pattern, in the order above) or a comma list of the names. Throws UsageError.
std::vector<CongestorPattern> parse_congestors(std::string_view text);

struct CongestionOptions {
  bool enabled = false;  ///< --congestion
  std::vector<CongestorPattern> congestors{CongestorPattern::kIncast, CongestorPattern::kAlltoall,
                                           CongestorPattern::kBroadcast};
  /// Share of the hosts that are victims (GPCNet: 20 %); ranks when the job has one host.
  double victim_fraction = 0.2;
  /// Explicit victim ranks (--victim-ranks); empty: victim_fraction of the hosts.
  std::vector<int> victim_ranks;
  /// Impact factor above which the p50 latency or the all-reduce bus bandwidth fails.
  double max_impact = 2.0;
  /// Impact factor above which the p99 latency or the tail bus bandwidth fails.
  double max_tail_impact = 4.0;
  std::uint64_t allreduce_bytes = 1ULL << 20;  ///< victims' all-reduce message (full vector)
  std::uint64_t congestor_bytes = 1ULL << 20;  ///< each congestor message
};

/// Throws UsageError for values that cannot work.
void validate(const CongestionOptions& options);

/// Who is a victim and who a congestor. Ranks in ascending order in both lists.
struct CongestionSplit {
  std::vector<int> victims;
  std::vector<int> congestors;
  /// Ping-pong pairs among the victims (first: the one that times), crossing hosts where the
  /// victims sit on several: victim i with victim i + ceil(v/2) in host order.
  std::vector<std::pair<int, int>> victim_pairs;
  int victim_hosts = 0, congestor_hosts = 0;
  bool by_host = true;  ///< false: one host (or --victim-ranks): split by rank
};

/// Splits the job. `host_of_rank[r]`: rank r's host. By host when the job has several hosts:
/// round(fraction x hosts) hosts (at least one), spread evenly over the hosts in the order of
/// their first rank (host floor((i + 1/2) h / v) for i < v), every rank of a victim host a
/// victim; by rank on one host. `victim_ranks` non-empty: exactly those. Needs >= 2 victim and
/// >= 2 congestor ranks; throws UsageError otherwise, naming what the job has.
CongestionSplit split_victims(const std::vector<std::string>& host_of_rank, double victim_fraction,
                              const std::vector<int>& victim_ranks);

/// GPCNet's impact factor: congested / isolated when lower is better (latency), isolated /
/// congested when higher is better (bandwidth). NaN when either figure is not > 0.
double impact_factor(double isolated, double congested, bool higher_is_better) noexcept;

/// The victims' figures of one window (isolated, or under one congestor).
struct VictimFigures {
  double latency_p50_us = 0, latency_p99_us = 0;  ///< half round trips, pooled over pairs
  double busbw_gbps = 0;       ///< all-reduce bus bandwidth from the mean iteration time
  double tail_busbw_gbps = 0;  ///< ... from the p99 iteration time
  std::size_t latency_samples = 0, allreduce_iterations = 0;
};

/// `half_rtt_us`: every timed ping-pong's half round trip (all pairs); `iteration_us[v][i]`:
/// victim v's time of all-reduce iteration i. An iteration's time is the slowest victim's (the
/// all-reduce is done when the last rank is); busbw = bytes / time x 2(p-1)/p (GB/s = 1e9 B/s).
VictimFigures victim_figures(std::span<const double> half_rtt_us,
                             const std::vector<std::vector<double>>& iteration_us,
                             std::uint64_t allreduce_bytes);

/// One victim metric under one congestor.
struct ImpactRow {
  std::string congestor;  ///< name_of(pattern)
  std::string metric;     ///< "latency_p50_us", "latency_p99_us", "busbw_gbps", "tail_busbw_gbps"
  double isolated = 0, congested = 0, impact = 0, max_impact = 0;
  bool tail = false;  ///< p99 metric: judged against max_tail_impact
  bool pass = false;  ///< impact <= max_impact (NaN impact: fails)
};

/// The four rows of one congestor, judged.
std::vector<ImpactRow> judge_impact(std::string_view congestor, const VictimFigures& isolated,
                                    const VictimFigures& congested,
                                    const CongestionOptions& options);

}  // namespace ibscope::accept
