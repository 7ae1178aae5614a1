#pragma once
/// The NIC counters around one measurement (a collective row, a p2p row, a probe row, an accept
/// round): each host's first rank reads its host's NICs (fabric/counters.hpp) before the row's
/// start barrier and after its own part, and rank 0 gathers the growth, host by host. Reading
/// stays outside every timed loop. Off (no reads, no gather) when not enabled: the same on
/// every rank.

#include <optional>
#include <string_view>
#include <vector>

#include "ibscope/fabric/counters.hpp"

namespace ibscope::bootstrap {
class Bootstrap;
}  // namespace ibscope::bootstrap

namespace ibscope::measure {

/// The deltas of `all` on host `a` or host `b` (a pair's two ends), in `all`'s order.
std::vector<fabric::NicDelta> deltas_of_hosts(const std::vector<fabric::NicDelta>& all,
                                              std::string_view a, std::string_view b);

class RowCounters {
 public:
  /// `enabled` must be the same on every rank.
  RowCounters(bootstrap::Bootstrap& boot, bool enabled, fabric::CounterReaderOptions options = {});

  bool enabled() const noexcept { return enabled_; }
  /// Before the row: the host's first rank reads.
  void begin();
  /// After this rank's part of the row: the host's first rank reads again.
  void end();
  /// Collective: every host's growth on rank 0 (host filled, hosts in rank order), empty
  /// elsewhere and when disabled.
  std::vector<fabric::NicDelta> gather(std::string_view what);

 private:
  bootstrap::Bootstrap& boot_;
  bool enabled_ = false, reader_rank_ = false;
  fabric::CounterReader reader_;
  std::optional<fabric::CounterSnapshot> before_, after_;
};

}  // namespace ibscope::measure
