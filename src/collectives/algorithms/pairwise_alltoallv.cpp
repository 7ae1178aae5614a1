#include "ibscope/collectives/algorithms/pairwise_alltoallv.hpp"

#include <vector>

#include "ibscope/collectives/algorithms/alltoallv_call.hpp"
#include "ibscope/collectives/algorithms/pairwise_alltoall.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"

namespace ibscope::collectives {

double pairwise_alltoallv_cost_s(const LinkCost& c, double n, int p) noexcept {
  return pairwise_alltoall_cost_s(c, n, p);
}

PairwiseAlltoallv::PairwiseAlltoallv(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), prologue_("pairwise", options) {}

void PairwiseAlltoallv::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  const AlltoallvCall c = prologue_.begin(a, comm_);
  if (p == 1) return;
  std::vector<transport::Request> both;
  both.reserve(2);
  for (int k = 1; k < p; ++k) {
    const int to = pattern::shift_send_peer(me, p, k);
    const int from = pattern::shift_recv_peer(me, p, k);
    both.clear();
    if (c.recv_bytes(from) > 0) {
      both.push_back(comm_.irecv(from, c.tag(from, k), c.recv_block(from), c.recv_bytes(from)));
    }
    if (c.send_bytes(to) > 0) {
      both.push_back(comm_.isend(to, c.tag(me, k), c.send_block(to), c.send_bytes(to)));
    }
    if (!both.empty()) comm_.wait_all(both, prologue_.what(), deadline);
  }
}

}  // namespace ibscope::collectives
