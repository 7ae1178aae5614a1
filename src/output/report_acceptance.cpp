// The all-pairs bandwidth matrix (acceptance links, else p2p bw rows) and the per-rank
// straggler charts (acceptance stragglers), from the typed acceptance section.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "ibscope/core/error.hpp"
#include "ibscope/output/csv.hpp"
#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

bool has_acceptance(const ReportFile& f) { return f.doc.acceptance.has_value(); }

std::string rank_label(int rank, const std::string& host) {
  return fmt::format("r{} {}", rank, host);
}

// Rows and columns: every rank that appears, ascending.
struct Matrix {
  std::map<int, std::string> ranks;  // rank -> host
  std::map<std::pair<int, int>, double> value;
  std::set<std::pair<int, int>> failing;

  Heatmap heatmap(std::string id, std::string title, std::string value_label) const {
    Heatmap h{std::move(id),
              std::move(title),
              "from rank (host)",
              "to rank (host)",
              std::move(value_label),
              {},
              {},
              {},
              {}};
    for (const auto& [r, host] : ranks) {
      h.rows.push_back(rank_label(r, host));
      h.columns.push_back(rank_label(r, host));
    }
    for (const auto& [a, ha] : ranks) {
      h.values.emplace_back();
      h.failing.emplace_back();
      for (const auto& [b, hb] : ranks) {
        const auto it = value.find({a, b});
        h.values.back().push_back(it == value.end() ? std::nullopt : std::optional(it->second));
        h.failing.back().push_back(failing.count({a, b}) > 0);
      }
    }
    return h;
  }
};

// Above this many hosts the rank-by-rank matrix is unreadable (and the page huge): failures, NICs
// and one row per host come first, every link only as a CSV download.
constexpr std::size_t kMatrixMaxHosts = 64;
// Failed links listed in the page at most; all of them are in the CSV.
constexpr std::size_t kFailedLinksShown = 200;

std::string base64_of(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      v = (v << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63U] : '=';
    }
  }
  return out;
}

std::string links_csv(const std::vector<results::AcceptLink>& links) {
  std::string csv =
      "rank_a,host_a,nic_a,rank_b,host_b,nic_b,measured_gbps,expected_gbps,fraction_of_expected,"
      "latency_us,attempts,pass,reason\n";
  for (const results::AcceptLink& l : links) {
    csv += fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.4g},{:.4g},{},{},{}\n", l.rank_a,
                       csv_field(l.host_a), csv_field(l.nic_a), l.rank_b, csv_field(l.host_b),
                       csv_field(l.nic_b), l.measured_gbps, l.expected_gbps, l.fraction_of_expected,
                       l.latency_us, l.attempts, l.pass ? 1 : 0, csv_field(l.reason));
  }
  return csv;
}

// The acceptance of a large job: failures first, then a row per host, then every link as CSV.
std::string acceptance_summary(const ReportFile& f, std::size_t i, std::size_t hosts) {
  const results::Acceptance& a = *f.doc.acceptance;
  std::size_t failed_links = 0;
  for (const auto& l : a.links) failed_links += l.pass ? 0 : 1;
  std::string out = paragraph(fmt::format(
      "{}: {} links between {} hosts, {} failed; verdict {}. Above {} hosts the pair matrix is "
      "left out: failures and one row per host here, every link in the CSV below.",
      f.label, a.links.size(), hosts, failed_links, a.pass ? "PASS" : "FAIL", kMatrixMaxHosts));
  for (const auto& note : a.notes) {
    if (note.rfind("pairs ", 0) == 0) out += paragraph(note);
  }
  std::vector<std::vector<std::string>> failed_hosts;
  for (const results::AcceptHost& h : a.hosts) {
    if (h.pass) continue;
    failed_hosts.push_back({h.host, fmt::format("{}", h.links), fmt::format("{}", h.failed_links),
                            h.culprit ? "yes" : "", h.reason});
  }
  if (!failed_hosts.empty()) {
    out += table({"failed host", "links", "failed links", "culprit", "reason"}, failed_hosts);
  }
  std::vector<std::vector<std::string>> failed_nics;
  for (const results::AcceptNic& n : a.nics) {
    if (n.pass) continue;
    failed_nics.push_back({n.host, n.nic, fmt::format("{}", n.links),
                           fmt::format("{}", n.failed_links), n.culprit ? "yes" : ""});
  }
  if (!failed_nics.empty()) {
    out += table({"host", "NIC with failed links", "links", "failed links", "every link failed"},
                 failed_nics);
  }
  std::vector<std::vector<std::string>> failed;
  for (const results::AcceptLink& l : a.links) {
    if (l.pass) continue;
    if (failed.size() == kFailedLinksShown) {
      out += paragraph(fmt::format("The first {} failed links of {}; all are in the CSV.",
                                   kFailedLinksShown, failed_links));
      break;
    }
    failed.push_back({rank_label(l.rank_a, l.host_a), rank_label(l.rank_b, l.host_b),
                      fmt::format("{:.4g}", l.measured_gbps),
                      fmt::format("{:.4g}", l.expected_gbps),
                      fmt::format("{:.3g}", l.fraction_of_expected), l.reason});
  }
  if (!failed.empty()) {
    out += table({"rank a (host)", "rank b (host)", "measured (GB/s)", "expected (GB/s)",
                  "fraction of expected", "reason"},
                 failed);
  }
  // Per host: its links' spread, the failing hosts first.
  std::map<std::string, std::vector<double>> by_host;
  for (const results::AcceptLink& l : a.links) {
    by_host[l.host_a].push_back(l.measured_gbps);
    by_host[l.host_b].push_back(l.measured_gbps);
  }
  std::vector<const results::AcceptHost*> order;
  for (const auto& h : a.hosts) order.push_back(&h);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* x, const auto* y) { return x->failed_links > y->failed_links; });
  std::vector<std::vector<std::string>> per_host;
  for (const results::AcceptHost* h : order) {
    auto v = by_host[h->host];
    std::sort(v.begin(), v.end());
    const std::string lo = v.empty() ? "" : fmt::format("{:.4g}", v.front());
    const std::string mid = v.empty() ? "" : fmt::format("{:.4g}", v[v.size() / 2]);
    per_host.push_back({h->host, fmt::format("{}", h->links), fmt::format("{}", h->failed_links),
                        lo, mid, h->pass ? "pass" : "FAIL"});
  }
  out += table(
      {"host", "links", "failed links", "slowest link (GB/s)", "median link (GB/s)", "verdict"},
      per_host);
  out += fmt::format(
      "<p><a download=\"acceptance-links-{}.csv\" href=\"data:text/csv;base64,{}\">Every link "
      "as CSV ({} rows)</a></p>",
      i + 1, base64_of(links_csv(a.links)), a.links.size());
  return out;
}

template <typename Links>
std::size_t ranks_joined(const Links& links) {
  std::set<int> ranks;
  for (const auto& l : links) {
    ranks.insert(l.rank_a);
    ranks.insert(l.rank_b);
  }
  return ranks.size();
}

std::string acceptance_matrix(const ReportFile& f, std::size_t i) {
  const auto& links = f.doc.acceptance->links;
  if (links.empty()) return "";
  std::set<std::string> hosts;
  for (const results::AcceptLink& l : links) {
    hosts.insert(l.host_a);
    hosts.insert(l.host_b);
  }
  // Many hosts, or many ranks on few hosts: a rank-by-rank matrix would be unreadable and huge.
  if (hosts.size() > kMatrixMaxHosts || ranks_joined(links) > kPerRankChartMaxRanks) {
    return acceptance_summary(f, i, hosts.size());
  }
  Matrix m;
  std::vector<std::vector<std::string>> failed;
  for (const results::AcceptLink& l : links) {
    const int a = l.rank_a, b = l.rank_b;
    m.ranks[a] = l.host_a;
    m.ranks[b] = l.host_b;
    m.value[{a, b}] = m.value[{b, a}] = l.measured_gbps;
    if (!l.pass) {
      m.failing.insert({a, b});
      m.failing.insert({b, a});
      failed.push_back({rank_label(a, l.host_a), rank_label(b, l.host_b),
                        fmt::format("{:.4g}", l.measured_gbps),
                        fmt::format("{:.4g}", l.expected_gbps),
                        fmt::format("{:.3g}", l.fraction_of_expected), l.reason});
    }
  }
  std::string out = figure(
      render_svg(m.heatmap(fmt::format("pairs-bw-{}", i + 1),
                           fmt::format("{}: all-pairs link bandwidth (acceptance)", f.label),
                           "measured (GB/s)")),
      "Each link's measured payload rate: the slower direction, best attempt (ibscope accept). "
      "Failing links have a red frame and a cross.");
  if (!failed.empty()) {
    out += table({"rank a (host)", "rank b (host)", "measured (GB/s)", "expected (GB/s)",
                  "fraction of expected", "reason"},
                 failed);
  }
  return out;
}

std::string p2p_matrix(const ReportFile& f, std::size_t i) {
  std::map<std::pair<int, int>, std::pair<std::int64_t, double>> best;  // largest size wins
  Matrix m;
  for (const measure::P2pRow& r : f.doc.p2p.rows) {
    if (r.test != "bw") continue;
    const int a = r.rank_a, b = r.rank_b;
    const auto size = static_cast<std::int64_t>(r.size_bytes);
    m.ranks[a] = r.host_a;
    m.ranks[b] = r.host_b;
    auto& cell = best[{a, b}];
    if (size >= cell.first) cell = {size, r.bw_gbps};
  }
  if (best.empty()) return "";
  if (m.ranks.size() > kPerRankChartMaxRanks) return p2p_at_scale(f, i, m.ranks.size());
  std::set<std::int64_t> sizes;
  for (const auto& [pair, v] : best) {
    m.value[pair] = v.second;
    sizes.insert(v.first);
  }
  return figure(
      render_svg(m.heatmap(fmt::format("pairs-bw-{}", i + 1),
                           fmt::format("{}: all-pairs p2p bandwidth", f.label), "bw (GB/s)")),
      fmt::format("One-way bandwidth from the row's rank to the column's, at the "
                  "largest size measured per pair ({} bytes). No pass/fail: p2p runs "
                  "have no expected rate.",
                  *sizes.rbegin()));
}

std::string straggler_charts(const ReportFile& f, std::size_t i) {
  if (!f.doc.acceptance->stragglers) return "";
  const results::Stragglers& s = *f.doc.acceptance->stragglers;
  if (s.ranks.empty()) return "";
  if (s.ranks.size() > kPerRankChartMaxRanks) return stragglers_at_scale(f, i);
  const int straggler = s.straggler ? s.straggler->rank : -1;
  StackedBars bars{fmt::format("stragglers-{}", i + 1),
                   fmt::format("{}: median lateness per rank", f.label),
                   "median arrival after the first rank (us)",
                   "rank (host)",
                   {},
                   {"median lateness (us)"},
                   {},
                   {}};
  std::vector<std::vector<std::string>> rows;
  for (const results::StragglerRank& r : s.ranks) {
    bars.bars.push_back(rank_label(r.rank, r.host));
    bars.values.push_back({r.median_late_us});
    bars.highlighted.push_back(r.rank == straggler);
    rows.push_back({rank_label(r.rank, r.host), fmt::format("{}", r.iterations),
                    fmt::format("{:.3g}", r.last_fraction), fmt::format("{:.4g}", r.median_late_us),
                    fmt::format("{:.3g}", r.median_late_fraction),
                    r.rank == straggler ? "straggler" : ""});
  }
  std::string out =
      figure(render_svg(bars), fmt::format("From per-rank arrival times at every all-reduce "
                                           "iteration, on rank 0's clock (clock uncertainty {:.3g} "
                                           "us). {}",
                                           s.clock_uncertainty_us, s.reason));
  out += table({"rank (host)", "iterations", "last (fraction of iterations)",
                "median lateness (us)", "median lateness (fraction of iteration)", "verdict"},
               rows);
  // The arrivals of the largest all-reduce measured, iteration by iteration.
  if (!s.rows.empty()) {
    const results::StragglerRow& last = s.rows.back();
    LineChart line{fmt::format("arrivals-{}", i + 1),
                   fmt::format("{}: arrival per iteration ({} all-reduce, {} bytes)", f.label,
                               last.algorithm, last.size_bytes),
                   Axis{"iteration (index)", AxisScale::kLinear, false},
                   Axis{"arrival after the first rank (us)", AxisScale::kLinear, false},
                   {},
                   {}};
    for (std::size_t it = 0; it < last.arrival_us.size(); ++it) {
      for (std::size_t r = 0; r < last.arrival_us[it].size(); ++r) {
        if (line.series.size() <= r) {
          line.series.push_back(Series{fmt::format("rank {}", r), {}, {}, true, false, -1});
        }
        const double us = last.arrival_us[it][r];
        if (!std::isfinite(us)) continue;  // a rank whose arrival was not recorded
        line.series[r].x.push_back(static_cast<double>(it));
        line.series[r].y.push_back(us);
      }
    }
    out += figure(render_svg(line),
                  "A straggler's line stays on top: it arrives last at most "
                  "iterations.");
  }
  return out;
}

}  // namespace

Section pairs_section(const std::vector<ReportFile>& files) {
  Section s{"pairs", "All pairs: bandwidth matrix", "", ""};
  for (std::size_t i = 0; i < files.size(); ++i) {
    s.html += has_acceptance(files[i]) ? acceptance_matrix(files[i], i) : "";
    if (!has_acceptance(files[i])) s.html += p2p_matrix(files[i], i);
  }
  if (s.html.empty()) {
    s.note =
        "No links between ranks in these files (ibscope accept on several hosts, or "
        "ibscope p2p bw rows).";
  }
  return s;
}

Section stragglers_section(const std::vector<ReportFile>& files) {
  Section s{"stragglers", "Stragglers: per-rank arrival", "", ""};
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (has_acceptance(files[i])) s.html += straggler_charts(files[i], i);
  }
  if (s.html.empty()) {
    s.note =
        "No per-rank arrival times in these files (ibscope accept without "
        "--skip-allreduce).";
  }
  return s;
}

}  // namespace ibscope::output::report
