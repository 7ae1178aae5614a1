// Each link against its past (accept/history.hpp), before the verdicts: a link far below its
// baseline is a suspect like a slow one, so it is measured again before it fails.
#include "ibscope/accept/history.hpp"
#include "link_measure.hpp"

namespace ibscope::accept {

void judge_link_history(LinkSet& links, const AcceptOptions& options) {
  if (!options.history) return;
  const History& h = *options.history;
  for (std::size_t i = 0; i < links.links.size() && i < links.evidence.size(); ++i) {
    LinkMeasurement& l = links.links[i];
    const LinkEvidence& e = links.evidence[i];
    l.history = judge_history(h.find_link(l.host_a, e.nic_a, l.host_b, e.nic_b), l.measured_gbps,
                              h.reference, options.history_thresholds);
  }
}

}  // namespace ibscope::accept
