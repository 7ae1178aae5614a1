#include "ibscope/collectives/harness/counts_call.hpp"

#include <algorithm>
#include <memory>

#include "ibscope/collectives/harness/call_layout.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/collectives/harness/collective_workspace.hpp"

namespace ibscope::collectives {

CountsCall counts_call(const CountsSpec* spec, int ranks, int rank, std::size_t count) {
  const CountsSpec uniform;
  auto m = std::make_shared<const CountsMatrix>(spec != nullptr ? *spec : uniform, ranks, count);
  CountsCall call{make_alltoallv_plan(*m, rank), m->imbalance(), m->max_rank_count()};
  call.plan.matrix = std::move(m);
  return call;
}

std::uint64_t counts_buffer_bytes(const CollectiveSweepOptions& o, int ranks) {
  const CountsSpec uniform;
  const CountsSpec& spec = o.counts ? *o.counts : uniform;
  std::uint64_t bytes = max_sweep_bytes(o);
  for (DataType t : o.types) {
    const std::size_t es = size_of(t);
    for (std::uint64_t b : measure::sweep_sizes(o.sweep, es)) {
      const std::size_t count = call_count(o.collective, b / es, ranks);
      bytes =
          std::max<std::uint64_t>(bytes, CountsMatrix(spec, ranks, count).max_rank_count() * es);
    }
  }
  return bytes;
}

}  // namespace ibscope::collectives
