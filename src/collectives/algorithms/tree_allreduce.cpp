#include "ibscope/collectives/algorithms/tree_allreduce.hpp"

#include <algorithm>
#include <cmath>

#include "ibscope/collectives/pattern/tree.hpp"

namespace ibscope::collectives {

double tree_allreduce_chunked_cost_s(const LinkCost& c, double n, int p,
                                     double chunk_bytes) noexcept {
  if (p <= 1 || n <= 0) return 0;
  const double d = pattern::tree_depth(p);
  const double k = std::max(1.0, std::ceil(n / std::max(chunk_bytes, 1.0)));
  const double chunk = n / k;
  const double m = std::min(2, p - 1);
  const double load = p <= 3 ? m : 3;
  return 2 * d * (c.alpha_s + m * chunk * c.beta_s_per_byte) + d * m * chunk * c.gamma_s_per_byte +
         (k - 1) * (c.alpha_s + load * chunk * c.beta_s_per_byte + m * chunk * c.gamma_s_per_byte);
}

double tree_allreduce_cost_s(const LinkCost& c, double n, int p) noexcept {
  return tree_allreduce_chunked_cost_s(c, n, p,
                                       static_cast<double>(TreeAllreduce::kDefaultChunkBytes));
}

TreeAllreduce::TreeAllreduce(transport::Comm& comm, const AlgorithmOptions& options)
    : pipeline_(comm, {pattern::btree_node(comm.rank(), comm.size())},
                options.chunk_bytes != 0 ? options.chunk_bytes : kDefaultChunkBytes, "tree",
                options.memory) {}

void TreeAllreduce::run(const CollectiveArgs& args, const Deadline& deadline) {
  pipeline_.run(args, deadline);
}

}  // namespace ibscope::collectives
