// The all-pairs bandwidth matrix (acceptance links, else p2p bw rows) and the per-rank
// straggler charts (acceptance stragglers). The results loader does not check the acceptance
// section, so every field read here is checked and a bad one named with file and JSON path.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ibscope/core/error.hpp"
#include "report_sections.hpp"

namespace ibscope::report {
namespace {

using nlohmann::json;

class Checked {
 public:
  explicit Checked(const std::string& source) : source_(source) {}

  const json& get(const json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where, "expected an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(fmt::format("{}.{}", where, key), "missing");
    return *it;
  }
  double number(const json& obj, const std::string& where, const char* key) const {
    const json& v = get(obj, where, key);
    if (!v.is_number()) fail(fmt::format("{}.{}", where, key), expected("a number", v));
    return v.get<double>();
  }
  int integer(const json& obj, const std::string& where, const char* key) const {
    const json& v = get(obj, where, key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (1 << 24)) {
      fail(fmt::format("{}.{}", where, key), expected("a rank (integer >= 0)", v));
    }
    return v.get<int>();
  }
  bool boolean(const json& obj, const std::string& where, const char* key) const {
    const json& v = get(obj, where, key);
    if (!v.is_boolean()) fail(fmt::format("{}.{}", where, key), expected("true or false", v));
    return v.get<bool>();
  }
  std::string string(const json& obj, const std::string& where, const char* key) const {
    const json& v = get(obj, where, key);
    if (!v.is_string()) fail(fmt::format("{}.{}", where, key), expected("a string", v));
    return v.get<std::string>();
  }
  const json& array(const json& obj, const std::string& where, const char* key) const {
    const json& v = get(obj, where, key);
    if (!v.is_array()) fail(fmt::format("{}.{}", where, key), expected("an array", v));
    return v;
  }
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError(fmt::format("{}: {}: {}", source_, where, what));
  }

 private:
  static std::string expected(const char* what, const json& v) {
    return fmt::format("expected {}, got {}", what, v.type_name());
  }
  const std::string& source_;
};

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

std::string acceptance_matrix(const ReportFile& f, std::size_t i) {
  const Checked c(f.path);
  const json& links = c.array(*f.doc.acceptance, "acceptance", "links");
  if (links.empty()) return "";
  Matrix m;
  std::vector<std::vector<std::string>> failed;
  for (std::size_t k = 0; k < links.size(); ++k) {
    const std::string where = fmt::format("acceptance.links[{}]", k);
    const json& l = links[k];
    const int a = c.integer(l, where, "rank_a"), b = c.integer(l, where, "rank_b");
    const std::string ha = c.string(l, where, "host_a"), hb = c.string(l, where, "host_b");
    const double gbps = c.number(l, where, "measured_gbps");
    const bool pass = c.boolean(l, where, "pass");
    m.ranks[a] = ha;
    m.ranks[b] = hb;
    m.value[{a, b}] = m.value[{b, a}] = gbps;
    if (!pass) {
      m.failing.insert({a, b});
      m.failing.insert({b, a});
      failed.push_back(
          {rank_label(a, ha), rank_label(b, hb), fmt::format("{:.4g}", gbps),
           fmt::format("{:.4g}", c.number(l, where, "expected_gbps")),
           fmt::format("{:.3g}", c.number(l, where, "fraction_of_expected")),
           l.contains("reason") && l["reason"].is_string() ? l["reason"].get<std::string>() : ""});
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
  for (const P2pRow& r : f.doc.p2p.rows) {
    if (r.test != "bw") continue;
    const int a = r.rank_a, b = r.rank_b;
    const auto size = static_cast<std::int64_t>(r.size_bytes);
    m.ranks[a] = r.host_a;
    m.ranks[b] = r.host_b;
    auto& cell = best[{a, b}];
    if (size >= cell.first) cell = {size, r.bw_gbps};
  }
  if (best.empty()) return "";
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
  const Checked c(f.path);
  const json& s = c.get(*f.doc.acceptance, "acceptance", "stragglers");
  if (s.is_null()) return "";
  const std::string where = "acceptance.stragglers";
  const json& ranks = c.array(s, where, "ranks");
  if (ranks.empty()) return "";
  int straggler = -1;
  const json& named = c.get(s, where, "straggler");
  if (named.is_object()) straggler = c.integer(named, where + ".straggler", "rank");
  StackedBars bars{fmt::format("stragglers-{}", i + 1),
                   fmt::format("{}: median lateness per rank", f.label),
                   "median arrival after the first rank (us)",
                   "rank (host)",
                   {},
                   {"median lateness (us)"},
                   {},
                   {}};
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const std::string w = fmt::format("{}.ranks[{}]", where, k);
    const int rank = c.integer(ranks[k], w, "rank");
    const std::string host = c.string(ranks[k], w, "host");
    const double late = c.number(ranks[k], w, "median_late_us");
    bars.bars.push_back(rank_label(rank, host));
    bars.values.push_back({late});
    bars.highlighted.push_back(rank == straggler);
    rows.push_back(
        {rank_label(rank, host), fmt::format("{:g}", c.number(ranks[k], w, "iterations")),
         fmt::format("{:.3g}", c.number(ranks[k], w, "last_fraction")), fmt::format("{:.4g}", late),
         fmt::format("{:.3g}", c.number(ranks[k], w, "median_late_fraction")),
         rank == straggler ? "straggler" : ""});
  }
  std::string reason =
      s.contains("reason") && s["reason"].is_string() ? s["reason"].get<std::string>() : "";
  std::string out =
      figure(render_svg(bars), fmt::format("From per-rank arrival times at every all-reduce "
                                           "iteration, on rank 0's clock (clock uncertainty {:.3g} "
                                           "us). {}",
                                           c.number(s, where, "clock_uncertainty_us"), reason));
  out += table({"rank (host)", "iterations", "last (fraction of iterations)",
                "median lateness (us)", "median lateness (fraction of iteration)", "verdict"},
               rows);
  // The arrivals of the largest all-reduce measured, iteration by iteration.
  const json& per_row = c.array(s, where, "rows");
  if (!per_row.empty()) {
    const std::size_t last = per_row.size() - 1;
    const std::string w = fmt::format("{}.rows[{}]", where, last);
    const json& arrival = c.array(per_row[last], w, "arrival_us");
    LineChart line{fmt::format("arrivals-{}", i + 1),
                   fmt::format("{}: arrival per iteration ({} all-reduce, {} bytes)", f.label,
                               c.string(per_row[last], w, "algorithm"),
                               c.number(per_row[last], w, "size_bytes")),
                   Axis{"iteration (index)", AxisScale::kLinear, false},
                   Axis{"arrival after the first rank (us)", AxisScale::kLinear, false},
                   {},
                   {}};
    for (std::size_t it = 0; it < arrival.size(); ++it) {
      const std::string wi = fmt::format("{}.arrival_us[{}]", w, it);
      if (!arrival[it].is_array()) c.fail(wi, "expected an array (one arrival per rank)");
      for (std::size_t r = 0; r < arrival[it].size(); ++r) {
        if (!arrival[it][r].is_number()) c.fail(fmt::format("{}[{}]", wi, r), "expected a number");
        if (line.series.size() <= r) {
          line.series.push_back(Series{fmt::format("rank {}", r), {}, {}, true, false, -1});
        }
        line.series[r].x.push_back(static_cast<double>(it));
        line.series[r].y.push_back(arrival[it][r].get<double>());
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

}  // namespace ibscope::report
