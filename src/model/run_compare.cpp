// Row-by-row comparison of two runs (model/run_compare.hpp): rows matched by what they
// measured and their size, the change in median time against a noise band from both rows'
// samples.

#include "ibscope/model/run_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/measure/stats.hpp"

namespace ibscope::model {
namespace {

// One comparable row of either side.
struct Comparable {
  std::string section, key, label;
  std::uint64_t size_bytes = 0;
  double time_us = 0, bw_gbps = 0;
  std::span<const double> samples_us;
  bool wrong = false;
};

std::string collective_key(const measure::CollectiveRow& r, bool any_algorithm) {
  std::string key =
      fmt::format("{}/{}/{}/{}/p{}/{}", name_of(r.collective), any_algorithm ? "*" : r.algorithm,
                  name_of(r.type), measure::name_of(r.op), r.ranks, r.in_place ? "in" : "out");
  if (!any_algorithm) key += fmt::format("/{}", memory::name_of(r.mem));
  if (r.root >= 0) key += fmt::format("/root{}", r.root);
  return key;
}

// Every row of `doc`, by key and size; a second row of the same key is noted and left out.
std::map<std::pair<std::string, std::uint64_t>, Comparable> comparables(
    const results::Document& doc, const CompareOptions& o, const char* side,
    std::vector<std::string>& notes, std::vector<std::pair<std::string, std::uint64_t>>& order) {
  std::map<std::pair<std::string, std::uint64_t>, Comparable> out;
  int duplicates = 0;
  const auto add = [&](Comparable c) {
    auto id = std::make_pair(c.key, c.size_bytes);
    if (out.count(id) != 0) {
      ++duplicates;
      return;
    }
    order.push_back(id);
    out.emplace(std::move(id), std::move(c));
  };
  for (const measure::CollectiveRow& r : doc.collectives.rows) {
    Comparable c;
    c.section = "collective";
    c.key = collective_key(r, o.any_algorithm);
    c.label =
        o.any_algorithm ? fmt::format("{} {}", r.algorithm, memory::name_of(r.mem)) : r.algorithm;
    c.size_bytes = r.size_bytes;
    c.time_us = r.iteration_us.p50 > 0 ? r.iteration_us.p50 : r.time_us;
    c.bw_gbps = r.busbw_gbps;
    c.samples_us = r.samples_us;
    c.wrong = r.wrong && *r.wrong > 0;
    add(std::move(c));
  }
  for (const measure::P2pRow& r : doc.p2p.rows) {
    Comparable c;
    c.section = "p2p";
    c.key = fmt::format("p2p/{}/{}-{}/w{}/{}", r.test, r.rank_a, r.rank_b, r.window, r.mem);
    c.label = fmt::format("{}-{}", r.host_a, r.host_b);
    c.size_bytes = r.size_bytes;
    c.time_us = r.time_us.p50;
    c.bw_gbps = r.bw_gbps;
    c.samples_us = r.samples_us;
    add(std::move(c));
  }
  if (doc.probes) {
    for (const measure::ProbeRow& r : doc.probes->rows) {
      Comparable c;
      c.section = "probe";
      c.key = fmt::format("verbs/{}/{}-{}/{}->{}/q{}{}", r.test, r.rank_a, r.rank_b, r.device_a,
                          r.device_b, r.qps, r.bidirectional ? "/bidir" : "");
      c.label = fmt::format("{}-{}", r.host_a, r.host_b);
      c.size_bytes = r.size_bytes;
      c.bw_gbps = r.bw_gbps;
      if (r.time_us.p50 > 0) {
        c.time_us = r.time_us.p50;  // latency rows
        c.samples_us = r.samples_us;
      } else if (r.bw_gbps > 0) {
        // Bandwidth rows keep no time: the time per message at the run's average bandwidth.
        c.time_us = static_cast<double>(r.size_bytes) / (r.bw_gbps * 1e3);
      }
      if (c.time_us > 0) add(std::move(c));
    }
  }
  if (duplicates > 0) {
    notes.push_back(fmt::format(
        "{}: {} row(s) share their key and size with an earlier row and were left out{}", side,
        duplicates,
        o.any_algorithm ? " (several algorithms: compare without --any-algorithm)" : ""));
  }
  return out;
}

double pct_change(double a, double b) { return a > 0 ? (b - a) / a * 100 : 0; }

}  // namespace

int RunComparison::count(RowChange c) const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [c](const auto& r) { return r.change == c; }));
}

int RunComparison::failures() const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.beyond_threshold; }));
}

double relative_spread(std::span<const double> samples_us) {
  if (samples_us.size() < 3) return 0;
  std::vector<double> s(samples_us.begin(), samples_us.end());
  std::sort(s.begin(), s.end());
  const double median = measure::percentile_sorted(s, 50);
  if (!(median > 0)) return 0;
  for (double& x : s) x = std::abs(x - median);
  std::sort(s.begin(), s.end());
  const double mad = measure::percentile_sorted(s, 50);
  return measure::kMadToSigma * mad / median;
}

RunComparison compare_runs(const results::Document& a, const results::Document& b,
                           const CompareOptions& options) {
  RunComparison out;
  std::vector<std::pair<std::string, std::uint64_t>> a_order, b_order;
  const auto rows_a = comparables(a, options, "A", out.notes, a_order);
  const auto rows_b = comparables(b, options, "B", out.notes, b_order);
  int wrong = 0;
  for (const auto& id : a_order) {
    const Comparable& x = rows_a.at(id);
    const auto it = rows_b.find(id);
    if (it == rows_b.end()) {
      ++out.only_a;
      continue;
    }
    const Comparable& y = it->second;
    RowComparison r;
    r.section = x.section;
    r.key = x.key;
    r.a_label = x.label;
    r.b_label = y.label;
    r.size_bytes = x.size_bytes;
    r.a_us = x.time_us;
    r.b_us = y.time_us;
    r.change_pct = pct_change(x.time_us, y.time_us);
    r.a_bw_gbps = x.bw_gbps;
    r.b_bw_gbps = y.bw_gbps;
    r.bw_change_pct = x.bw_gbps > 0 && y.bw_gbps > 0 ? pct_change(x.bw_gbps, y.bw_gbps) : 0;
    const double sa = relative_spread(x.samples_us), sb = relative_spread(y.samples_us);
    r.band_pct =
        std::max(options.noise_floor_pct, options.noise_k * 100 * std::sqrt(sa * sa + sb * sb));
    // Symmetric in the ratio: B slower when t_B > t_A (1 + band), faster when t_A > t_B (1 +
    // band); a relative change cannot fall below -100 %, so "faster" is not -change > band.
    const double grow = 1 + r.band_pct / 100;
    if (y.time_us > x.time_us * grow) {
      r.change = RowChange::kSlower;
      r.beyond_threshold = r.change_pct > options.threshold_pct;
    } else if (x.time_us > y.time_us * grow) {
      r.change = RowChange::kFaster;
    }
    wrong += (x.wrong ? 1 : 0) + (y.wrong ? 1 : 0);
    out.rows.push_back(std::move(r));
  }
  for (const auto& id : b_order) {
    if (rows_a.count(id) == 0) ++out.only_b;
  }
  if (wrong > 0) {
    out.notes.push_back(
        fmt::format("{} compared row(s) counted wrong elements (#wrong > 0): their times are not a "
                    "measurement of a correct collective",
                    wrong));
  }
  return out;
}

}  // namespace ibscope::model
