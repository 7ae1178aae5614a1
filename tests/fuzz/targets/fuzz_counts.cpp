// The counts file of `ibscope alltoallv --counts FILE`
// (collectives/pattern/alltoallv_counts_file.hpp). Expected rejection: UsageError naming
// source:line:column. Properties: an accepted matrix is p x p; scaled to a size, every rank's plan
// sends and receives what the matrix says, its offsets stay inside its totals, and the totals add
// up to mean x p.

#include <cstddef>
#include <cstdint>
#include <numeric>

#include "fuzz_support.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts_file.hpp"
#include "ibscope/core/error.hpp"

namespace co = ibscope::collectives;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  co::CountsSpec spec;
  try {
    spec = co::parse_counts_matrix(ibscope::fuzz::as_text(data, size), "fuzz.txt");
  } catch (const ibscope::UsageError&) {
    return 0;
  }
  const int p = spec.matrix_ranks;
  IBSCOPE_FUZZ_CHECK(p >= 1);
  IBSCOPE_FUZZ_CHECK(spec.weights.size() ==
                     static_cast<std::size_t>(p) * static_cast<std::size_t>(p));
  if (p > 64) return 0;  // the plans below are O(p^2) each
  for (std::size_t mean : {std::size_t{0}, std::size_t{3}, std::size_t{1} << 20}) {
    const co::CountsMatrix m(spec, p, mean);
    std::size_t sent = 0, received = 0;
    for (int r = 0; r < p; ++r) {
      const co::AlltoallvPlan plan = co::make_alltoallv_plan(m, r);
      for (int q = 0; q < p; ++q) {
        const auto uq = static_cast<std::size_t>(q);
        IBSCOPE_FUZZ_CHECK(plan.send_counts[uq] == m.at(r, q));
        IBSCOPE_FUZZ_CHECK(plan.recv_counts[uq] == m.at(q, r));
        IBSCOPE_FUZZ_CHECK(plan.send_offsets[uq] + plan.send_counts[uq] <= plan.send_total);
        IBSCOPE_FUZZ_CHECK(plan.recv_offsets[uq] + plan.recv_counts[uq] <= plan.recv_total);
      }
      sent += plan.send_total;
      received += plan.recv_total;
    }
    IBSCOPE_FUZZ_CHECK(sent == mean * static_cast<std::size_t>(p));
    IBSCOPE_FUZZ_CHECK(received == sent);
    const co::CountsImbalance im = m.imbalance();
    IBSCOPE_FUZZ_CHECK(im.send_max_over_mean >= 1 && im.recv_max_over_mean >= 1 &&
                       im.pair_max_over_mean >= 1);
  }
  return 0;
}
