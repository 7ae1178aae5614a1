// The "NIC counters (ibscope watch)" section of the HTML report: per watch log and host, each
// NIC's traffic rate over time, the cumulative growth of its error, flap and congestion
// counters, and the findings as they were raised (docs/counters.md, "ibscope watch").

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

// The findings table lists where each finding started; a long, flapping run is cut here.
constexpr std::size_t kMaxFindingRows = 50;

std::string watch_host_html(const WatchLogFile& log, const std::string& host, std::size_t id) {
  std::vector<const results::WatchLogLine*> lines;
  for (const auto& l : log.lines) {
    if (l.host == host) lines.push_back(&l);
  }
  const double t0 = lines.front()->unix_time_s;
  std::vector<std::string> order;  // NICs in order of first appearance
  std::map<std::string, Series> rate, errors, flaps, congestion;
  std::map<std::string, std::uint64_t> error_sum, flap_sum, congestion_sum;
  std::vector<std::vector<std::string>> finding_rows;
  std::size_t findings_left = 0;
  std::set<std::pair<std::string, std::string>> previous;
  for (const auto* l : lines) {
    const double t = l->unix_time_s - t0;
    for (const auto& n : l->nics) {
      if (!rate.count(n.nic)) order.push_back(n.nic);
      error_sum[n.nic] += n.errors;
      flap_sum[n.nic] += n.flaps;
      congestion_sum[n.nic] += n.congestion;
      if (n.driver != "tcp") {  // TCP counts segments, not bytes
        rate[n.nic].x.push_back(t);
        rate[n.nic].y.push_back(n.bytes_per_s / 1e6);
      } else {
        rate[n.nic];
      }
      for (auto [series, sum] : {std::pair{&errors, &error_sum}, std::pair{&flaps, &flap_sum},
                                 std::pair{&congestion, &congestion_sum}}) {
        (*series)[n.nic].x.push_back(t);
        (*series)[n.nic].y.push_back(static_cast<double>((*sum)[n.nic]));
      }
    }
    std::set<std::pair<std::string, std::string>> now;
    for (const auto& f : l->findings) {
      now.emplace(f.kind, f.nic);
      if (previous.count({f.kind, f.nic})) continue;  // still raised: shown when it started
      if (finding_rows.size() < kMaxFindingRows) {
        finding_rows.push_back({fmt::format("{:.1f}", t), f.nic, f.kind, f.detail});
      } else {
        ++findings_left;
      }
    }
    previous = std::move(now);
  }
  LineChart rates{fmt::format("watch-rate-{}", id),
                  fmt::format("{}: traffic per NIC (sent + received)", host),
                  Axis{"time since the first reading (s)", AxisScale::kLinear, false},
                  Axis{"rate (MB/s)", AxisScale::kLinear, false},
                  {},
                  {}};
  LineChart grown{fmt::format("watch-errors-{}", id),
                  fmt::format("{}: error, flap and congestion counters per NIC", host),
                  Axis{"time since the first reading (s)", AxisScale::kLinear, false},
                  Axis{"growth since the first reading (count)", AxisScale::kLinear, false},
                  {},
                  {}};
  for (const auto& nic : order) {
    if (!rate[nic].x.empty()) {
      rates.series.push_back(rate[nic]);
      rates.series.back().name = nic;
    }
    for (auto [series, sum, what] :
         {std::tuple{&errors, &error_sum, "errors"}, std::tuple{&flaps, &flap_sum, "flaps"},
          std::tuple{&congestion, &congestion_sum, "congestion"}}) {
      if ((*sum)[nic] == 0) continue;
      grown.series.push_back((*series)[nic]);
      grown.series.back().name = fmt::format("{} {}", nic, what);
      grown.series.back().dashed = std::string_view(what) != "errors";
    }
  }
  std::string out = fmt::format("<h3>{}</h3>", xml_escape(host));
  out += figure(render_svg(rates),
                "Bytes sent plus received per second over each interval (MB = 1e6 B); the "
                "namespace's TCP counts segments and is not drawn. A rail far under the others "
                "while the node is busy is a rail the job stopped using.");
  if (grown.series.empty()) {
    out += paragraph("No error, flap or congestion counter grew.");
  } else {
    out += figure(render_svg(grown),
                  "Cumulative growth of the counters of kind errors (solid), flaps and "
                  "congestion (dashed), per NIC that had any.");
  }
  if (finding_rows.empty()) {
    out += paragraph("Findings: none.");
  } else {
    out += table({"time (s)", "NIC", "finding", "detail"}, finding_rows);
    if (findings_left > 0) {
      out += paragraph(fmt::format("{} more findings are in the log.", findings_left));
    }
  }
  return out;
}

}  // namespace

Section watch_section(const std::vector<WatchLogFile>& logs) {
  Section s{"watch", "NIC counters (ibscope watch)", "", "No ibscope watch log given."};
  std::size_t id = 0;
  for (const auto& log : logs) {
    s.html += fmt::format("<p>{}: {} intervals</p>", xml_escape(log.label), log.lines.size());
    std::vector<std::string> hosts;
    for (const auto& l : log.lines) {
      if (std::find(hosts.begin(), hosts.end(), l.host) == hosts.end()) hosts.push_back(l.host);
    }
    for (const auto& host : hosts) s.html += watch_host_html(log, host, id++);
  }
  return s;
}

}  // namespace ibscope::output::report
