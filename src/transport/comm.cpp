#include "ibscope/transport/comm.hpp"

#include "ibscope/bootstrap/bootstrap.hpp"

namespace ibscope::transport {

int Comm::rank() const noexcept { return bootstrap_.rank(); }

int Comm::size() const noexcept { return bootstrap_.size(); }

void Comm::wait(Request& request, std::string_view what, const Deadline& deadline) {
  while (!request.test()) {
    progress();
    poll_health(what, deadline, request.peer());
  }
}

// A send that is not accepted points at the peer (or link) that stopped; a receive may only
// wait for a rank that is itself stalled further round the ring. Completed requests are
// released on the way (test() does that anyway).
int Comm::stalled_peer(std::span<Request> requests, std::size_t first_pending) {
  int receive_peer = -1;
  for (std::size_t i = first_pending; i < requests.size(); ++i) {
    if (requests[i].test()) continue;
    if (requests[i].is_send()) return requests[i].peer();
    if (receive_peer < 0) receive_peer = requests[i].peer();
  }
  return receive_peer;
}

void Comm::wait_all(std::span<Request> requests, std::string_view what, const Deadline& deadline) {
  std::size_t first_pending = 0;
  while (first_pending < requests.size()) {
    if (requests[first_pending].test()) {
      ++first_pending;
      continue;
    }
    progress();
    int waiting_for = requests[first_pending].peer();
    if ((health_counter_ & 0xf) == 0xf) waiting_for = stalled_peer(requests, first_pending);
    if (waiting_for < 0) continue;  // everything completed meanwhile: the loop will see it
    poll_health(what, deadline, waiting_for);
  }
}

}  // namespace ibscope::transport
