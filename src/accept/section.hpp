#pragma once
// Internal to accept/: the "acceptance" results section and the console's failure lines, from
// everything rank 0 knows at the end of the run.

#include <optional>
#include <string>
#include <vector>

#include "ibscope/accept/accept_runner.hpp"
#include "ibscope/accept/pairing.hpp"
#include "ibscope/accept/preflight.hpp"
#include "ibscope/accept/straggler.hpp"
#include "link_measure.hpp"

namespace ibscope::accept {

struct SectionInputs {
  const AcceptOptions& options;
  AcceptTransport transport;
  const Preflight& preflight;
  const LinkSet& links;
  const AcceptReport& report;
  int retests = 0;
  const std::vector<std::string>& hosts_by_rank;
  std::optional<StragglerReport> stragglers;
  const std::vector<measure::CollectiveRow>* allreduce_rows = nullptr;
  std::uint64_t allreduce_wrong = 0;
  const PairPlan* pairs = nullptr;  ///< which pairs were measured (noted in the section)
  /// Every host NIC's counter growth over the whole all-pairs phase; null: not read.
  const std::vector<fabric::NicDelta>* phase_nics = nullptr;
  /// --pattern: the rounds' verdicts (accept/pattern_verdict.hpp); null: no pattern phase.
  const std::vector<results::AcceptPattern>* patterns = nullptr;
};

/// The verdict (pass), the section, and the failure / warning lines.
AcceptResult build_section(const SectionInputs& in);

}  // namespace ibscope::accept
