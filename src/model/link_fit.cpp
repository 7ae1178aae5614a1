#include "ibscope/model/link_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "ibscope/core/error.hpp"
#include "ibscope/core/hosts.hpp"
#include "ibscope/model/regression.hpp"

namespace ibscope::model {
namespace {

// The cost formulas are linear in alpha, beta and gamma, so evaluating one with a unit cost
// gives that parameter's coefficient at (n, p).
double coefficient(const collectives::CollectiveAlgorithmInfo& a, double n, int p, int which) {
  collectives::LinkCost unit;
  if (which == 0) unit.alpha_s = 1;
  if (which == 1) unit.beta_s_per_byte = 1;
  if (which == 2) unit.gamma_s_per_byte = 1;
  return a.cost_s(unit, n, p);
}

}  // namespace

LinkFit fit_link(Collective c, std::string_view algorithm, std::span<const CollectivePoint> pts) {
  const auto& info = collectives::find_algorithm(c, algorithm);
  if (pts.size() < 2) {
    throw UsageError(
        fmt::format("fitting {} {}: {} measured point(s); at least 2 sizes are "
                    "needed to separate latency from bandwidth",
                    name_of(c), algorithm, pts.size()));
  }
  const int n_columns = reduces(c) ? 3 : 2;
  std::vector<std::vector<double>> columns(n_columns);
  std::vector<double> y;
  std::set<int> ranks;
  for (const auto& pt : pts) {
    if (pt.ranks < 2 || !(pt.bytes > 0) || !(pt.time_s > 0)) {
      throw UsageError(
          fmt::format("fitting {} {}: a point needs >= 2 ranks, > 0 bytes and a "
                      "time > 0 (got {} ranks, {} B, {} s)",
                      name_of(c), algorithm, pt.ranks, pt.bytes, pt.time_s));
    }
    for (int j = 0; j < n_columns; ++j) {
      columns[j].push_back(coefficient(info, pt.bytes, pt.ranks, j));
    }
    y.push_back(pt.time_s);
    ranks.insert(pt.ranks);
  }
  const RegressionResult r = robust_least_squares(columns, y);
  if (r.dropped[1]) {
    throw UsageError(
        fmt::format("fitting {} {}: the points do not determine a bandwidth "
                    "({}); measure more than one size",
                    name_of(c), algorithm, r.note));
  }
  LinkFit fit;
  fit.link.alpha_s = r.coef[0];
  fit.link.beta_s_per_byte = r.coef[1];
  // Ring-like formulas reduce (p-1)/p n bytes for every 2(p-1)/p n on the wire at every p:
  // the gamma column is then a multiple of beta's and its time is carried by beta.
  fit.gamma_folded = n_columns == 3 && r.dropped[2];
  if (n_columns == 3 && !r.dropped[2]) fit.link.gamma_s_per_byte = r.coef[2];
  fit.r2 = r.r2;
  fit.points = static_cast<int>(pts.size());
  fit.rank_counts.assign(ranks.begin(), ranks.end());
  for (std::size_t i = 0; i < y.size(); ++i) {
    fit.max_abs_residual_fraction =
        std::max(fit.max_abs_residual_fraction, std::abs(r.residuals[i]) / y[i]);
  }
  return fit;
}

MeasuredTier measured_tier(const results::Document& results) {
  const auto& hosts = results.job.hosts;
  const int distinct = count_hosts(hosts);
  if (hosts.size() > 1 && distinct == static_cast<int>(hosts.size())) return MeasuredTier::kInter;
  if (distinct == 1) return MeasuredTier::kIntra;
  return MeasuredTier::kMixed;
}

std::vector<CollectivePoint> collective_points(const results::Document& results, Collective c,
                                               std::string_view algorithm) {
  std::vector<CollectivePoint> pts;
  for (const measure::CollectiveRow& row : results.collectives.rows) {
    if (row.collective != c || row.algorithm != algorithm) continue;
    if (row.wrong && *row.wrong > 0) continue;
    const double p50_us = row.iteration_us.p50;
    if (!(p50_us > 0)) continue;
    pts.push_back({row.ranks, static_cast<double>(row.size_bytes), p50_us * 1e-6});
  }
  return pts;
}

}  // namespace ibscope::model
