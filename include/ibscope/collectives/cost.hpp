#pragma once
/// Alpha-beta-gamma cost formulas (Thakur, Rabenseifner, Gropp 2005), shared by the algorithm
/// registry and the model. alpha: seconds per message; beta: seconds per byte on the wire;
/// gamma: seconds per byte reduced. n: message bytes; p: ranks.

#include <cstddef>

namespace ibscope::collectives {

struct LinkCost {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  double gamma_s_per_byte = 0;
};

/// Ring all-reduce (reduce-scatter + all-gather):
/// 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
double ring_allreduce_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

/// Hierarchical all-reduce (algorithms/hier_allreduce.hpp) over two tiers, L ranks on each of
/// H hosts: 3 alpha_intra + (L-1)/L n (gamma_intra + beta_intra) + the ring all-reduce of n/L
/// over H ranks at the inter-host cost.
double hier_allreduce_cost_s(const LinkCost& intra, const LinkCost& inter, double n_bytes,
                             int ranks_per_host, int hosts) noexcept;

/// The same with one link class for every pair of ranks (the registry's cost_s shape): every
/// rank counts as its own host, where hier is the ring.
double hier_allreduce_one_tier_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

}  // namespace ibscope::collectives
