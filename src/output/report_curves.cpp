// Curves vs message size: busbw and latency percentiles per collective and algorithm, p2p
// latency and bandwidth per rank pair. Every point is a row of a results file.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "ibscope/collectives/descriptor.hpp"
#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

constexpr std::size_t kMaxSeries = 16;  // per chart; beyond, the chart gets unreadable

// Series in first-seen order, points sorted by x when drawn.
class SeriesSet {
 public:
  Series& at(const std::string& name) {
    const auto it = index_.find(name);
    if (it != index_.end()) return series_[it->second];
    index_[name] = series_.size();
    series_.push_back(Series{name, {}, {}, true, false, -1});
    return series_.back();
  }
  void add(const std::string& name, double x, double y) {
    Series& s = at(name);
    s.x.push_back(x);
    s.y.push_back(y);
  }
  std::vector<Series> sorted(std::size_t& left_out) {
    for (auto& s : series_) {
      std::vector<std::pair<double, double>> p;
      for (std::size_t i = 0; i < s.x.size(); ++i) p.emplace_back(s.x[i], s.y[i]);
      std::sort(p.begin(), p.end());
      for (std::size_t i = 0; i < p.size(); ++i) std::tie(s.x[i], s.y[i]) = p[i];
    }
    left_out = series_.size() > kMaxSeries ? series_.size() - kMaxSeries : 0;
    std::vector<Series> out(
        series_.begin(), series_.begin() + static_cast<long>(std::min(series_.size(), kMaxSeries)));
    return out;
  }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<Series> series_;
};

// The p50 and p99 of a row's time_us at `size`, under "<name> p50" and "<name> p99".
void add_percentiles(SeriesSet& p50, SeriesSet& p99, const std::string& name, double size,
                     const measure::Stats& time_us) {
  p50.add(name + " p50", size, time_us.p50);
  p99.add(name + " p99", size, time_us.p99);
}

struct RowRef {
  std::size_t file = 0;
  const measure::CollectiveRow* row = nullptr;
};

std::string root_text(const measure::CollectiveRow& r) {
  return r.root >= 0 ? fmt::format("{}", r.root) : std::string();
}

std::string row_qualifiers(const measure::CollectiveRow& r, bool ranks, bool place, bool type_op,
                           bool root) {
  std::string q;
  if (ranks) q += fmt::format(" p{}", r.ranks);
  if (place) q += r.in_place ? " in-place" : " out-of-place";
  if (type_op) q += fmt::format(" {}/{}", name_of(r.type), measure::name_of(r.op));
  if (root && r.root >= 0) q += fmt::format(" root {}", r.root);
  return q;
}

std::string left_out_note(std::size_t n) {
  return n == 0 ? ""
                : fmt::format(" {} more series not drawn (at most {} per chart).", n, kMaxSeries);
}

std::string collective_charts(const std::vector<ReportFile>& files, const std::string& coll,
                              const std::vector<RowRef>& rows,
                              const std::vector<ReferenceLine>& rates) {
  std::set<int> ranks;
  std::set<bool> places;
  std::set<std::string> type_ops, roots;
  for (const auto& r : rows) {
    const measure::CollectiveRow& j = *r.row;
    ranks.insert(j.ranks);
    places.insert(j.in_place);
    type_ops.insert(fmt::format("{}/{}", name_of(j.type), measure::name_of(j.op)));
    roots.insert(root_text(j));
  }
  SeriesSet busbw, p50, p99;
  std::map<std::string, std::size_t> file_of;
  for (const auto& r : rows) {
    const measure::CollectiveRow& j = *r.row;
    const std::string name = file_prefix(files, r.file) + j.algorithm +
                             row_qualifiers(j, ranks.size() > 1, places.size() > 1,
                                            type_ops.size() > 1, roots.size() > 1);
    file_of[name] = r.file;
    const auto size = static_cast<double>(j.size_bytes);
    busbw.add(name, size, j.busbw_gbps);
    add_percentiles(p50, p99, name, size, j.iteration_us);
  }
  std::size_t left = 0;
  LineChart bw{"busbw-" + coll,
               coll + ": bus bandwidth vs message size",
               Axis{"message size (bytes)", AxisScale::kLog2, true},
               Axis{"busbw (GB/s)", AxisScale::kLog10, false},
               busbw.sorted(left),
               rates};
  for (std::size_t k = 0; k < bw.series.size(); ++k) {
    bw.series[k].dashed = file_of[bw.series[k].name] % 2 == 1;
  }
  std::string out = figure(render_svg(bw),
                           fmt::format("busbw = algbw x the nccl-tests factor (results/README.md); "
                                       "one series per algorithm{}; the dotted red line is the "
                                       "expected rate of one link.{}",
                                       files.size() > 1 ? " and file" : "", left_out_note(left)));
  LineChart lat{"latency-" + coll,
                coll + ": time per call vs message size (p50 line, p99 dots)",
                Axis{"message size (bytes)", AxisScale::kLog2, true},
                Axis{"time (us)", AxisScale::kLog10, false},
                {},
                {}};
  std::size_t left50 = 0, left99 = 0;
  auto s50 = p50.sorted(left50), s99 = p99.sorted(left99);
  for (std::size_t k = 0; k < s50.size(); ++k) {
    s50[k].color = static_cast<int>(k);
    lat.series.push_back(s50[k]);
    if (k < s99.size()) {
      s99[k].color = static_cast<int>(k);
      s99[k].line = false;
      lat.series.push_back(s99[k]);
    }
  }
  out += figure(render_svg(lat),
                fmt::format("Percentiles of the calls of the rank the others waited for.{}",
                            left_out_note(left50)));
  return out;
}

std::string pair_name(const measure::P2pRow& r) {
  return fmt::format("{}-{} ({} - {})", r.rank_a, r.rank_b, r.host_a, r.host_b);
}

}  // namespace

Section collectives_section(const std::vector<ReportFile>& files,
                            const std::vector<ReferenceLine>& rates) {
  Section s{"collectives", "Collectives: busbw and latency vs message size", "", ""};
  std::vector<std::string> order;  // the descriptors' order, then any other name seen
  for (const auto& d : collectives::descriptors()) order.emplace_back(d.name);
  std::map<std::string, std::vector<RowRef>> by_coll;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (const measure::CollectiveRow& r : files[i].doc.collectives.rows) {
      const std::string c(name_of(r.collective));
      if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
      by_coll[c].push_back({i, &r});
    }
  }
  for (const auto& c : order) {
    if (by_coll.count(c))
      s.html += "<h3>" + xml_escape(c) + "</h3>" + collective_charts(files, c, by_coll[c], rates);
  }
  if (s.html.empty())
    s.note = "No collective rows in these files (ibscope allreduce, run, accept).";
  return s;
}

Section p2p_section(const std::vector<ReportFile>& files, const std::vector<ReferenceLine>& rates) {
  Section s{"p2p", "Point to point: latency and bandwidth vs message size", "", ""};
  SeriesSet p50, p99, bw;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (const measure::P2pRow& r : files[i].doc.p2p.rows) {
      if (r.pattern) continue;  // a pattern's flows: the patterns section
      const std::string& test = r.test;
      const auto size = static_cast<double>(r.size_bytes);
      const std::string name = file_prefix(files, i) + pair_name(r);
      if (test == "latency") {
        add_percentiles(p50, p99, name, size, r.time_us);
      } else {
        bw.add(fmt::format("{}{} {}", file_prefix(files, i), test, pair_name(r)), size, r.bw_gbps);
      }
    }
  }
  std::size_t left50 = 0, left99 = 0, left_bw = 0;
  auto s50 = p50.sorted(left50), s99 = p99.sorted(left99);
  if (!s50.empty()) {
    LineChart lat{"p2p-latency",
                  "p2p latency (half round trip) vs message size",
                  Axis{"message size (bytes)", AxisScale::kLog2, true},
                  Axis{"half round trip (us)", AxisScale::kLog10, false},
                  {},
                  {}};
    for (std::size_t k = 0; k < s50.size(); ++k) {
      s50[k].color = s99[k].color = static_cast<int>(k);
      s99[k].line = false;
      lat.series.push_back(s50[k]);
      lat.series.push_back(s99[k]);
    }
    s.html += figure(render_svg(lat),
                     "p50 (line) and p99 (dots) of every kept sample, per rank "
                     "pair." +
                         left_out_note(left50));
  }
  auto sbw = bw.sorted(left_bw);
  if (!sbw.empty()) {
    LineChart c{"p2p-bw",
                "p2p bandwidth vs message size",
                Axis{"message size (bytes)", AxisScale::kLog2, true},
                Axis{"bandwidth (GB/s)", AxisScale::kLog10, false},
                sbw,
                rates};
    s.html += figure(render_svg(c),
                     "bw: one way a -> b; bibw: both ways at once (sum). The "
                     "dotted red line is the expected rate of one link." +
                         left_out_note(left_bw));
  }
  if (s.html.empty()) s.note = "No p2p rows in these files (ibscope p2p, run, accept).";
  return s;
}

}  // namespace ibscope::output::report
