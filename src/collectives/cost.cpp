#include "ibscope/collectives/cost.hpp"

namespace ibscope::collectives {

double ring_allreduce_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const double pm1 = p - 1;
  return 2 * pm1 * c.alpha_s + 2 * pm1 / p * n * c.beta_s_per_byte +
         pm1 / p * n * c.gamma_s_per_byte;
}

double hier_allreduce_cost_s(const LinkCost& intra, const LinkCost& inter, double n,
                             int ranks_per_host, int hosts) noexcept {
  const int l = ranks_per_host;
  if (l * hosts <= 1) return 0;
  double t = ring_allreduce_cost_s(inter, n / l, hosts);
  if (l > 1) {
    t += 3 * intra.alpha_s +
         static_cast<double>(l - 1) / l * n * (intra.gamma_s_per_byte + intra.beta_s_per_byte);
  }
  return t;
}

double hier_allreduce_one_tier_cost_s(const LinkCost& c, double n, int p) noexcept {
  return hier_allreduce_cost_s(c, c, n, 1, p);
}

}  // namespace ibscope::collectives
