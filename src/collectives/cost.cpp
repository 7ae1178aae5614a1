#include "ibscope/collectives/cost.hpp"

namespace ibscope::collectives {

double ring_allreduce_cost_s(const LinkCost& c, double n, int p) noexcept {
  if (p <= 1) return 0;
  const double pm1 = p - 1;
  return 2 * pm1 * c.alpha_s + 2 * pm1 / p * n * c.beta_s_per_byte +
         pm1 / p * n * c.gamma_s_per_byte;
}

double allreduce_busbw_factor(int p) noexcept { return p > 1 ? 2.0 * (p - 1) / p : 0.0; }

}  // namespace ibscope::collectives
