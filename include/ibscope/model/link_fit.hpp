#pragma once
/// Per-hop link parameters (alpha, beta, gamma) fitted from measured collective times through
/// the algorithm's own cost formula (the registry's cost_s, linear in alpha, beta and gamma), so
/// that measurements at a few rank counts predict others. Pure: points in, parameters out.
/// Method and limits: docs/model.md, "Network tiers and predictions".

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::model {

/// One measured collective call: `ranks` ranks, `bytes` (full vector), `time_s` per call.
struct CollectivePoint {
  int ranks = 0;
  double bytes = 0;
  double time_s = 0;
};

struct LinkFit {
  collectives::LinkCost link;  ///< per hop; gamma 0 when folded into beta (gamma_folded)
  bool gamma_folded = false;   ///< the points cannot separate beta and gamma: beta includes it
  double r2 = 0;               ///< of the fitted times
  double max_abs_residual_fraction = 0;  ///< worst |measured - fitted| / measured
  int points = 0;
  std::vector<int> rank_counts;  ///< distinct rank counts fitted, ascending
};

/// Fits alpha and beta (and gamma when separable) of `algorithm` for collective `c` by robust
/// regression on relative error (model/regression.hpp). Throws UsageError for an unknown
/// algorithm, fewer than 2 points, or points that cannot determine alpha and beta.
LinkFit fit_link(Collective c, std::string_view algorithm, std::span<const CollectivePoint> pts);

/// Which tier a results file measured: every rank on its own host (inter-node), or every
/// rank on one host (intra-node). Other layouts measure a mix and are not used for a tier.
enum class MeasuredTier { kInter, kIntra, kMixed };
MeasuredTier measured_tier(const results::Document& results);

/// The collective rows of a results document (results/loader.hpp) for `c`
/// and `algorithm`, as points (time = the row's median per-call time), rows with #wrong > 0
/// left out.
std::vector<CollectivePoint> collective_points(const results::Document& results, Collective c,
                                               std::string_view algorithm);

}  // namespace ibscope::model
