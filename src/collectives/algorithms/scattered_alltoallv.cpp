#include "ibscope/collectives/algorithms/scattered_alltoallv.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/collectives/algorithms/alltoallv_call.hpp"
#include "ibscope/collectives/algorithms/scattered_alltoall.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"

namespace ibscope::collectives {

double scattered_alltoallv_cost_s(const LinkCost& c, double n, int p) noexcept {
  return scattered_alltoall_cost_s(c, n, p);
}

ScatteredAlltoallv::ScatteredAlltoallv(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), memory_(options.memory), space_(space_of(options)) {
  window_.reserve(2 * kScatteredWindowPeers);
}

void ScatteredAlltoallv::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  const AlltoallvPlan& plan = alltoallv_plan_of(a, p, "scattered");
  alltoallv_own_block(a, plan, me, space_);
  if (p == 1) return;
  const std::size_t es = size_of(a.type);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  if (what_count_ != a.count) {
    what_ = fmt::format("alltoallv scattered ({} elements per rank on average)", a.count);
    what_count_ = a.count;
  }
  const std::uint32_t seq = comm_.next_op_seq();
  auto tag = [&](int source, int round) {
    return transport::make_tag(source, seq, static_cast<std::uint32_t>(round), 0);
  };
  for (int first = 1; first < p; first += kScatteredWindowPeers) {
    const int end = std::min(p, first + kScatteredWindowPeers);
    window_.clear();
    for (int k = first; k < end; ++k) {  // receives first: no message arrives unexpected
      const int from = pattern::shift_recv_peer(me, p, k);
      const auto uf = static_cast<std::size_t>(from);
      if (plan.recv_counts[uf] == 0) continue;
      window_.push_back(comm_.irecv(from, tag(from, k), out + plan.recv_offsets[uf] * es,
                                    plan.recv_counts[uf] * es));
    }
    for (int k = first; k < end; ++k) {
      const int to = pattern::shift_send_peer(me, p, k);
      const auto ut = static_cast<std::size_t>(to);
      if (plan.send_counts[ut] == 0) continue;
      window_.push_back(
          comm_.isend(to, tag(me, k), in + plan.send_offsets[ut] * es, plan.send_counts[ut] * es));
    }
    if (!window_.empty()) comm_.wait_all(window_, what_, deadline);
  }
}

}  // namespace ibscope::collectives
