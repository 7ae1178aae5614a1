#include "ibscope/collectives/algorithms/scattered_alltoallv.hpp"

#include <algorithm>

#include "ibscope/collectives/algorithms/alltoallv_call.hpp"
#include "ibscope/collectives/algorithms/scattered_alltoall.hpp"
#include "ibscope/collectives/pattern/alltoall.hpp"

namespace ibscope::collectives {

double scattered_alltoallv_cost_s(const LinkCost& c, double n, int p) noexcept {
  return scattered_alltoall_cost_s(c, n, p);
}

ScatteredAlltoallv::ScatteredAlltoallv(transport::Comm& comm, const AlgorithmOptions& options)
    : comm_(comm), prologue_("scattered", options) {
  window_.reserve(2 * kScatteredWindowPeers);
}

void ScatteredAlltoallv::run(const CollectiveArgs& a, const Deadline& deadline) {
  const int p = comm_.size();
  const int me = comm_.rank();
  const AlltoallvCall c = prologue_.begin(a, comm_);
  if (p == 1) return;
  for (int first = 1; first < p; first += kScatteredWindowPeers) {
    const int end = std::min(p, first + kScatteredWindowPeers);
    window_.clear();
    for (int k = first; k < end; ++k) {  // receives first: no message arrives unexpected
      const int from = pattern::shift_recv_peer(me, p, k);
      if (c.recv_bytes(from) == 0) continue;
      window_.push_back(comm_.irecv(from, c.tag(from, k), c.recv_block(from), c.recv_bytes(from)));
    }
    for (int k = first; k < end; ++k) {
      const int to = pattern::shift_send_peer(me, p, k);
      if (c.send_bytes(to) == 0) continue;
      window_.push_back(comm_.isend(to, c.tag(me, k), c.send_block(to), c.send_bytes(to)));
    }
    if (!window_.empty()) comm_.wait_all(window_, prologue_.what(), deadline);
  }
}

}  // namespace ibscope::collectives
