#include "ibscope/cli/accept_baseline.hpp"

#include <fmt/format.h>

namespace ibscope::cli {
namespace {

std::optional<accept::ClassReference> reference_of(const results::Baseline& b) {
  for (const auto& f : b.references) {
    if (f.metric != "link_bw_gbps") continue;
    return accept::ClassReference{b.name, f.value_gbps,
                                  fmt::format("{}: {}", f.source_url, f.source_says)};
  }
  return std::nullopt;
}

}  // namespace

accept::History history_of(const results::Baseline& b, const std::string& path) {
  accept::History h;
  if (b.kind == results::BaselineKind::kReference) {
    h.source = fmt::format("{} (reference: {})", path, b.name);
    h.reference = reference_of(b);
    return h;
  }
  h.source = fmt::format("{} (measured, {} runs{})", path, b.runs.size(), b.mixed ? ", mixed" : "");
  for (const auto& l : b.links) {
    h.links.push_back(
        accept::LinkHistory{l.host_a, l.host_b, l.nic_a, l.nic_b, l.bw_gbps, l.latency_us});
  }
  for (const auto& r : b.rows) {
    h.rows.push_back(accept::RowHistory{r.collective, r.algorithm, r.type, r.size_bytes, r.ranks,
                                        r.busbw_gbps, r.time_us});
  }
  return h;
}

accept::History complete_history(accept::History history, const results::Baseline& baseline,
                                 const std::vector<topo::HostTopology>& hosts,
                                 std::vector<std::string>& warnings) {
  results::Document probe;
  probe.topology = hosts;
  results::HardwareSignature run = results::signature_of(probe);
  if (baseline.kind == results::BaselineKind::kMeasured) {
    run.transport = baseline.hardware.transport;  // decided later in the run; not compared here
    run.hosts = baseline.hardware.hosts;          // a subset of the hosts is judged link by link
    if (!(run == baseline.hardware)) {
      warnings.push_back(fmt::format(
          "baseline {}: made on other hardware ({}) than this run's ({}): its figures may not "
          "apply",
          history.source, baseline.hardware.describe(), run.describe()));
    }
    const std::vector<results::Baseline> shipped = results::shipped_references();
    if (const results::Baseline* r = results::match_reference(shipped, run)) {
      history.reference = reference_of(*r);
    }
  }
  return history;
}

}  // namespace ibscope::cli
