#pragma once
/// Algorithm selection for `-A auto`: a tuning table of measured crossover points, derived from
/// an `-A all` sweep (pure: rows in, table out), saved in that run's results file under
/// "tuning" (results/document.hpp), and read back with `--tuning FILE`; and the documented default
/// rule used when no table matches.
///
/// A table has one entry per (collective, ranks, hosts); an entry is a list of size ranges,
/// each "sizes up to max_bytes use algorithm A", the last one open-ended. Sizes between two
/// measured sizes take the range of the smaller one's successor, i.e. the crossover is placed
/// just above the largest size at which the smaller-size winner was measured to win.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/measure/records.hpp"

namespace ibscope::collectives {

struct TuningRange {
  std::uint64_t max_bytes = UINT64_MAX;  ///< inclusive; UINT64_MAX = no upper bound
  std::string algorithm;
};

struct TuningEntry {
  std::string collective;
  int ranks = 0;
  int hosts = 0;
  std::vector<TuningRange> ranges;  ///< ascending max_bytes, the last one UINT64_MAX
};

struct TuningTable {
  std::vector<TuningEntry> entries;
  std::string source;  ///< the file it came from, or "this run"
};

/// The winner per size among the rows of each (collective, ranks): the algorithm with the
/// lowest sum, over the rows' types and ops, of the median time (out-of-place rows; in-place
/// when a size has no out-of-place row). Rows with #wrong > 0 disqualify their algorithm at
/// that size; size 0 is ignored. Entries are made only where >= 2 algorithms were measured.
TuningTable derive_tuning(const std::vector<measure::CollectiveRow>& rows, int hosts);

/// A sweep's rows kept for its tuning table as they come (the crossovers of `-A all`): the rows
/// of algorithms run by name, without their samples. -A auto's picks (`selected_by` set) are
/// not kept: they measure an algorithm at the sizes it was picked for only.
class TuningRows {
 public:
  void add(const std::vector<measure::CollectiveRow>& rows);
  /// derive_tuning of the rows kept, when two or more algorithms were run by name; else nullopt.
  std::optional<TuningTable> derive(int hosts) const;

 private:
  std::vector<measure::CollectiveRow> rows_;
};

/// Whether this build registers an algorithm `name` for collective `c`.
bool has_algorithm(Collective c, std::string_view name);
/// The registered algorithm `name` of collective `c`, or null (never throws).
const CollectiveAlgorithmInfo* algorithm_named(Collective c, std::string_view name);
/// Whether `name` is an algorithm of `c` that needs the intra-host arena (capabilities).
bool needs_arena(Collective c, std::string_view name);
/// The algorithm of `c` that the default rule may pick where the job has the intra-host arena
/// (the first registered with needs_intra_host_arena: hier for all-reduce, all-to-all and
/// all-to-all-v); empty: none.
std::string_view arena_algorithm(Collective c);

/// The algorithm for `bytes`, or nothing when no entry has this collective, rank and host
/// count.
std::optional<std::string> select_algorithm(const TuningTable& table, Collective c, int ranks,
                                            int hosts, std::uint64_t bytes);

/// The built-in rule, from measurements on one host (docs/performance.md): for all-reduce,
/// recursive doubling up to 16 KiB, Rabenseifner up to 512 KiB, ring above (when those
/// algorithms are registered); the ring for the other collectives. The collective workspace
/// asks default_rule_picks_hier first, where hier can run.
std::string default_algorithm(Collective c, int ranks, std::uint64_t bytes);

/// The smallest all-reduce for which the default rule picks hier across hosts (4 netns hosts x
/// 2 ranks at 200 Mbit and 1 Gbit: hier 1.18x and 1.31x the flat ring at 8 MiB, 0.86-1.06x at
/// 1-4 MiB; docs/performance.md).
inline constexpr std::uint64_t kHierAcrossHostsMinBytes = 8ULL << 20;

/// Whether the default rule picks hier, the collective's arena_algorithm() (when this job can
/// run it: host memory, ranks placed in equal blocks per host), for a collective that has one:
/// with several ranks on one host at every size; across hosts with several ranks per host from
/// kHierAcrossHostsMinBytes.
bool default_rule_picks_hier(Collective c, int ranks, int hosts, std::uint64_t bytes);

/// Whether default_rule_picks_hier holds for some size: the job needs hier's arena.
bool default_rule_may_pick_hier(Collective c, int ranks, int hosts);

}  // namespace ibscope::collectives
