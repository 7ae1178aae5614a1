// The all-pairs and straggler sections for jobs with more ranks than a per-rank matrix or chart
// can show (kPerRankChartMaxRanks): a 10,752-rank job would draw 10^8 matrix cells and a bar per
// rank. Instead: each figure's distribution over the links or ranks (percentiles and a sorted
// curve of at most kCurvePoints points), and the worst links and ranks by name, a bounded number
// of each. The page then grows with nothing but the number of failing links shown (capped).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

constexpr std::size_t kWorstShown = 20;     // worst links / latest ranks, by name
constexpr std::size_t kFailingShown = 100;  // failing links listed
constexpr std::size_t kCurvePoints = 201;   // points of a sorted (quantile) curve

std::string named_rank(int rank, const std::string& host) {
  return fmt::format("r{} {}", rank, host);
}

// Nearest-rank quantile of sorted values, q in [0, 1].
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::nan("");
  const auto n = sorted.size();
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  return sorted[std::clamp<std::size_t>(k, 1, n) - 1];
}

std::vector<double> finite_sorted(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> quantile_row(const std::string& what, const std::vector<double>& v) {
  const auto s = finite_sorted(v);
  auto g = [&](double q) {
    return s.empty() ? std::string("-") : fmt::format("{:.4g}", quantile(s, q));
  };
  return {what, std::to_string(s.size()), g(0), g(0.01), g(0.05), g(0.5), g(0.95), g(0.99), g(1)};
}

const std::vector<std::string> kQuantileHeader = {"figure", "n",   "min", "p1", "p5",
                                                  "p50",    "p95", "p99", "max"};

// The sorted values as a curve: x = percent of the items at or below, y = the value.
Series sorted_curve(std::string name, const std::vector<double>& values) {
  const auto s = finite_sorted(values);
  Series out{std::move(name), {}, {}, true, false, -1};
  if (s.empty()) return out;
  const std::size_t points = std::min(kCurvePoints, s.size());
  for (std::size_t k = 0; k < points; ++k) {
    const double q = points == 1 ? 1.0 : static_cast<double>(k) / static_cast<double>(points - 1);
    out.x.push_back(100 * q);
    out.y.push_back(quantile(s, std::max(q, 1e-12)));
  }
  return out;
}

struct Link {
  int a = 0, b = 0;
  std::string host_a, host_b;
  double gbps = 0, expected = 0, fraction = 0, latency_us = 0;
  bool pass = true;
  std::string reason;
};

std::string links_summary(const std::vector<Link>& links, std::size_t ranks, std::size_t hosts,
                          const std::string& chart_id, const std::string& what) {
  std::vector<double> gbps, fraction, latency;
  for (const auto& l : links) {
    gbps.push_back(l.gbps);
    if (l.expected > 0) fraction.push_back(l.fraction);
    if (l.latency_us > 0) latency.push_back(l.latency_us);
  }
  std::string out = paragraph(fmt::format(
      "{} links between {} ranks on {} hosts: more than {} ranks, too many for a matrix. "
      "Their distribution and the slowest links by name instead.",
      links.size(), ranks, hosts, kPerRankChartMaxRanks));
  std::vector<std::vector<std::string>> q = {quantile_row("measured (GB/s)", gbps)};
  if (!fraction.empty()) q.push_back(quantile_row("fraction of expected", fraction));
  if (!latency.empty()) q.push_back(quantile_row("latency (us)", latency));
  out += table(kQuantileHeader, q);
  LineChart curve{chart_id,
                  what + ": every link's bandwidth, sorted",
                  Axis{"links at or below (%)", AxisScale::kLinear, false},
                  Axis{"measured (GB/s)", AxisScale::kLinear, false},
                  {sorted_curve("measured (GB/s)", gbps)},
                  {}};
  out += figure(render_svg(curve),
                "The links' bandwidth in ascending order (a quantile curve): a flat curve is a "
                "uniform fabric; a tail on the left is the slow links listed below.");

  std::vector<const Link*> order;
  for (const auto& l : links) order.push_back(&l);
  std::sort(order.begin(), order.end(), [](const Link* x, const Link* y) {
    return x->gbps < y->gbps || (x->gbps == y->gbps && std::tie(x->a, x->b) < std::tie(y->a, y->b));
  });
  auto row = [](const Link& l) {
    return std::vector<std::string>{named_rank(l.a, l.host_a),
                                    named_rank(l.b, l.host_b),
                                    fmt::format("{:.4g}", l.gbps),
                                    l.expected > 0 ? fmt::format("{:.4g}", l.expected) : "-",
                                    l.expected > 0 ? fmt::format("{:.3g}", l.fraction) : "-",
                                    l.pass ? "pass" : "FAIL",
                                    l.reason};
  };
  const std::vector<std::string> header = {
      "rank a (host)",        "rank b (host)", "measured (GB/s)", "expected (GB/s)",
      "fraction of expected", "verdict",       "reason"};
  std::vector<std::vector<std::string>> worst;
  for (std::size_t k = 0; k < order.size() && k < kWorstShown; ++k) worst.push_back(row(*order[k]));
  out += paragraph(fmt::format("The {} slowest links:", worst.size()));
  out += table(header, worst);

  std::vector<std::vector<std::string>> failing;
  std::size_t failed = 0;
  std::map<std::string, int> failed_by_host;
  for (const Link* l : order) {
    if (l->pass) continue;
    ++failed;
    ++failed_by_host[l->host_a];
    ++failed_by_host[l->host_b];
    if (failing.size() < kFailingShown) failing.push_back(row(*l));
  }
  if (failed > 0) {
    out += paragraph(fmt::format("{} failing links{}:", failed,
                                 failed > failing.size()
                                     ? fmt::format(" (the {} slowest shown; every link is in the "
                                                   "results file)",
                                                   failing.size())
                                     : ""));
    out += table(header, failing);
    std::vector<std::pair<int, std::string>> by_host;
    for (const auto& [h, n] : failed_by_host) by_host.emplace_back(n, h);
    std::sort(by_host.begin(), by_host.end(), [](const auto& x, const auto& y) {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    });
    std::vector<std::vector<std::string>> hosts_rows;
    for (std::size_t k = 0; k < by_host.size() && k < kWorstShown; ++k) {
      hosts_rows.push_back({by_host[k].second, std::to_string(by_host[k].first)});
    }
    out += table({"host", "failing links"}, hosts_rows);
  }
  return out;
}

std::size_t distinct_hosts_of(const std::vector<Link>& links) {
  std::set<std::string> hosts;
  for (const auto& l : links) {
    hosts.insert(l.host_a);
    hosts.insert(l.host_b);
  }
  return hosts.size();
}

}  // namespace

std::string p2p_at_scale(const ReportFile& f, std::size_t i, std::size_t ranks) {
  std::map<std::pair<int, int>, const measure::P2pRow*> best;  // largest size per pair
  for (const measure::P2pRow& r : f.doc.p2p.rows) {
    if (r.test != "bw") continue;
    auto& cell = best[{r.rank_a, r.rank_b}];
    if (cell == nullptr || r.size_bytes >= cell->size_bytes) cell = &r;
  }
  std::vector<Link> links;
  for (const auto& [pair, r] : best) {
    links.push_back(
        Link{pair.first, pair.second, r->host_a, r->host_b, r->bw_gbps, 0, 0, 0, true, ""});
  }
  return links_summary(links, ranks, distinct_hosts_of(links), fmt::format("pairs-bw-{}", i + 1),
                       fmt::format("{}: p2p bw (largest size per pair)", f.label));
}

std::string stragglers_at_scale(const ReportFile& f, std::size_t i) {
  const results::Stragglers& s = *f.doc.acceptance->stragglers;
  const int straggler = s.straggler ? s.straggler->rank : -1;
  std::vector<double> late, last;
  for (const auto& r : s.ranks) {
    late.push_back(r.median_late_us);
    last.push_back(r.last_fraction);
  }
  std::string out = paragraph(fmt::format(
      "{} ranks: more than {}, too many for a bar per rank. The distribution over the ranks "
      "and the latest ranks by name instead (clock uncertainty {:.3g} us). {}",
      s.ranks.size(), kPerRankChartMaxRanks, s.clock_uncertainty_us, s.reason));
  out += table(kQuantileHeader, {quantile_row("median lateness (us)", late),
                                 quantile_row("last (fraction of iterations)", last)});
  std::vector<const results::StragglerRank*> order;
  for (const auto& r : s.ranks) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const auto* x, const auto* y) {
    return x->median_late_us > y->median_late_us ||
           (x->median_late_us == y->median_late_us && x->rank < y->rank);
  });
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < order.size() && k < kWorstShown; ++k) {
    const auto& r = *order[k];
    rows.push_back({named_rank(r.rank, r.host), fmt::format("{}", r.iterations),
                    fmt::format("{:.3g}", r.last_fraction), fmt::format("{:.4g}", r.median_late_us),
                    fmt::format("{:.3g}", r.median_late_fraction),
                    r.rank == straggler ? "straggler" : ""});
  }
  out += paragraph(fmt::format("The {} latest ranks:", rows.size()));
  out += table({"rank (host)", "iterations", "last (fraction of iterations)",
                "median lateness (us)", "median lateness (fraction of iteration)", "verdict"},
               rows);
  if (!s.rows.empty()) {
    const results::StragglerRow& row = s.rows.back();
    const std::vector<results::ArrivalSummary> per_it =
        row.arrivals.empty() ? results::summarise_arrivals(row.arrival_us) : row.arrivals;
    LineChart line{fmt::format("arrivals-{}", i + 1),
                   fmt::format("{}: arrival per iteration over the ranks ({} all-reduce, {} bytes)",
                               f.label, row.algorithm, row.size_bytes),
                   Axis{"iteration (index)", AxisScale::kLinear, false},
                   Axis{"arrival after the first rank (us)", AxisScale::kLinear, false},
                   {Series{"p50 over ranks", {}, {}, true, false, -1},
                    Series{"p99 over ranks", {}, {}, true, false, -1},
                    Series{"last rank", {}, {}, true, false, -1}},
                   {}};
    std::map<int, int> last_counts;
    for (std::size_t it = 0; it < per_it.size(); ++it) {
      const auto& a = per_it[it];
      if (a.ranks == 0) continue;
      const auto x = static_cast<double>(it);
      line.series[0].x.push_back(x);
      line.series[0].y.push_back(a.p50_us);
      line.series[1].x.push_back(x);
      line.series[1].y.push_back(a.p99_us);
      line.series[2].x.push_back(x);
      line.series[2].y.push_back(a.max_us);
      ++last_counts[a.last_rank];
    }
    std::string lasts;
    for (const auto& [rank, n] : last_counts) {
      if (lasts.size() > 400) {
        lasts += ", ...";
        break;
      }
      lasts += fmt::format("{}r{} ({}x)", lasts.empty() ? "" : ", ", rank, n);
    }
    out += figure(render_svg(line),
                  fmt::format("Per iteration, the ranks' median and 99th percentile arrival and "
                              "the last rank's. Last ranks: {}.",
                              lasts.empty() ? "-" : lasts));
  }
  return out;
}

}  // namespace ibscope::output::report
