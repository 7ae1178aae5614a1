#include "ibscope/cli/accept_baseline.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "ibscope/core/error.hpp"
#include "ibscope/history/past_links.hpp"
#include "ibscope/history/schema.hpp"

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

std::optional<accept::ClassReference> shipped_reference_for(
    const std::vector<topo::HostTopology>& hosts) {
  results::Document probe;
  probe.topology = hosts;
  const std::vector<results::Baseline> shipped = results::shipped_references();
  if (const results::Baseline* r =
          results::match_reference(shipped, results::signature_of(probe))) {
    return reference_of(*r);
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
    history.reference = shipped_reference_for(hosts);
  }
  return history;
}

std::string utc_days_before(const std::string& now_utc, int days) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (std::sscanf(now_utc.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &sec) != 6) {
    throw UsageError(fmt::format("'{}' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)", now_utc));
  }
  using namespace std::chrono;
  const sys_days day = sys_days{year_month_day{year{y}, month{static_cast<unsigned>(mo)},
                                               std::chrono::day{static_cast<unsigned>(d)}}} -
                       std::chrono::days{days};
  const year_month_day since{day};
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z", static_cast<int>(since.year()),
                     static_cast<unsigned>(since.month()), static_cast<unsigned>(since.day()), h,
                     mi, sec);
}

accept::History history_from_db(const std::filesystem::path& db, int days,
                                const std::string& now_utc,
                                const std::vector<topo::HostTopology>& hosts,
                                std::vector<std::string>& warnings) {
  history::Database handle = history::open_history(db, history::Database::Mode::kReadOnly);
  const std::string since = utc_days_before(now_utc, days);
  const history::PastLinks past = history::past_links(handle, since);
  accept::History h;
  h.source = fmt::format("{} (its own accept runs of the last {} days: {} runs since {})",
                         db.string(), days, past.runs, since);
  for (const auto& l : past.links) {
    h.links.push_back(accept::LinkHistory{l.host_a, l.host_b, l.nic_a, l.nic_b,
                                          measure::robust_stats(l.bw_gbps),
                                          measure::robust_stats(l.latency_us)});
  }
  if (past.runs == 0) {
    warnings.push_back(fmt::format(
        "baseline {}: no accept link measured by a complete run since {} ({} days): no link is "
        "judged against its past",
        db.string(), since, days));
  }
  h.reference = shipped_reference_for(hosts);
  return h;
}

}  // namespace ibscope::cli
