#pragma once
/// Traffic patterns for `ibscope p2p` and `ibscope accept` beside disjoint pairs (pure math,
/// unit-tested; no I/O). Units are ranks (p2p) or hosts (accept).
///   pairs           the default: disjoint pairs in round-robin rounds (pair_schedule.hpp)
///   incast:K        K senders stream to one receiver (the hub) at once; one round per hub
///   one-to-many:K   one sender (the hub) streams to K receivers at once; one round per hub
///   bisection       the first half of the units streams to the second half and back, every
///                   unit in one flow each way, all at once (one round; an odd unit out sits)
/// A round's flows are computed by every rank from (pattern, units, round) alone: O(K) for
/// incast and one-to-many, O(units) for bisection, nothing gathered.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope::measure {

enum class PatternKind { kPairs, kIncast, kOneToMany, kBisection };

struct TrafficPattern {
  PatternKind kind = PatternKind::kPairs;
  int k = 0;  ///< incast / one-to-many: the senders / receivers per hub (>= 1)

  bool is_pairs() const noexcept { return kind == PatternKind::kPairs; }
};

/// "pairs" | "incast:K" | "one-to-many:K" | "bisection" (K >= 1). Throws UsageError.
TrafficPattern parse_traffic_pattern(std::string_view text);
/// The spelling parse_traffic_pattern reads ("incast:3").
std::string to_string(const TrafficPattern& pattern);

/// Which hubs (receivers of incast, senders of one-to-many) get a round: every unit in turn
/// (default), `sample:N` (N hubs spread evenly over the units), or a list "3" / "0,5".
struct HubSelection {
  enum class Mode { kAll, kSample, kList } mode = Mode::kAll;
  int sample = 0;
  std::vector<int> list;
};

/// "all" | "sample:N" (N >= 1) | "A,B,..." (units >= 0). Throws UsageError.
HubSelection parse_hub_selection(std::string_view text);

/// Throws UsageError when `pattern` cannot run on `units` units: incast:K and one-to-many:K
/// need K < units (a hub and K others), bisection needs 2 units or more, and a hub list entry
/// must be below `units` (the message names the flag and the job's size).
void validate_pattern(const TrafficPattern& pattern, const HubSelection& hubs, int units,
                      std::string_view unit_name = "hosts");

/// One stream of messages from `src` to `dst` (units).
struct Flow {
  int src = 0, dst = 0;
  friend bool operator==(const Flow&, const Flow&) = default;
};

/// The rounds of `pattern` over `units` units (after validate_pattern): hub patterns have one
/// round per selected hub, bisection one; kPairs has none here (pair_schedule.hpp has them).
int pattern_round_count(const TrafficPattern& pattern, const HubSelection& hubs, int units);
/// The hub of round `r` (incast: its receiver, one-to-many: its sender); -1 for bisection.
int pattern_hub(const TrafficPattern& pattern, const HubSelection& hubs, int units, int r);
/// The flows of round `r`, all at the same time: incast onto hub h takes senders h+1..h+K
/// (mod units), one-to-many from h reaches h+1..h+K; bisection pairs i with i + units/2 for
/// i < units/2, one flow each way.
std::vector<Flow> pattern_round(const TrafficPattern& pattern, const HubSelection& hubs, int units,
                                int r);

/// Jain's fairness index of the flows' rates: (sum x)^2 / (n * sum x^2), in (0, 1]; 1 when
/// every flow gets the same rate, 1/n when one flow gets everything. 1 for no flows or all
/// zero (nothing to be unfair about). Negative rates throw std::invalid_argument.
double jain_index(std::span<const double> rates);

}  // namespace ibscope::measure

namespace ibscope::measure {

/// A round's figures from its flows' bytes and times (seconds, each from the round's common
/// start to the flow's last byte acknowledged): per-flow GB/s, the aggregate (all bytes over the
/// slowest flow's time: the hub's link while any flow still ran) and Jain's index of the
/// per-flow rates. A flow of 0 s counts 0 GB/s.
struct RoundFigures {
  std::vector<double> flow_gbps;
  double aggregate_gbps = 0;
  double fairness_jain = 1;
};
RoundFigures round_figures(std::span<const double> flow_bytes, std::span<const double> flow_s);

}  // namespace ibscope::measure
