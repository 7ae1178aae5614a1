#include "ibscope/transport/inproc/inproc_comm.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <thread>

#include "ibscope/core/interrupt.hpp"

namespace ibscope::transport::inproc {

InprocBootstrap::InprocBootstrap(Fabric& fabric, int rank)
    : Bootstrap(rank, fabric.size(), fabric.shape().timeout_s), fabric_(fabric) {
  const int per_host = fabric.shape().ranks_per_host;
  std::vector<std::string> hosts;
  for (int r = 0; r < fabric.size(); ++r) hosts.push_back(fabric.host_of(r));
  set_layout(rank % per_host, per_host, fabric.size() / per_host, std::move(hosts));
}

std::vector<bootstrap::Bytes> InprocBootstrap::allgather(std::span<const std::byte> mine,
                                                         std::string_view what) {
  return fabric_.allgather(rank(), mine, what, Deadline(timeout_s()));
}

void InprocBootstrap::publish(std::string_view key, std::span<const std::byte> value) {
  fabric_.publish(rank(), key, value);
}

std::vector<bootstrap::Bytes> InprocBootstrap::lookup(std::string_view key,
                                                      std::span<const int> ranks,
                                                      std::string_view what) {
  std::vector<bootstrap::Bytes> out;
  for (const int r : ranks) {
    auto v = fabric_.lookup(key, r);
    if (!v) {
      throw RemoteError(fmt::format("{}: {} has not published '{}'", what, describe(r), key));
    }
    out.push_back(std::move(*v));
  }
  return out;
}

void InprocBootstrap::check_health() {
  if (auto f = fabric_.failure()) throw RemoteError(*f);
}

void InprocBootstrap::abort_job(std::string_view reason) noexcept {
  try {
    fabric_.mark_failed(rank(), reason);
  } catch (...) {  // noexcept: a failed allocation leaves the others to their deadlines
  }
}

Request InprocComm::isend(int peer, Tag tag, const void* buffer, std::size_t bytes) {
  const Faults& f = fabric_.shape().faults;
  if (rank() == f.slow_rank) std::this_thread::sleep_for(f.send_delay);
  if (rank() == f.dying_rank && ++sends_ >= f.die_at_send) {
    throw SimulatedDeath(ErrorKind::kRemote,
                         fmt::format("rank {} dies at its send {} (injected)", rank(), sends_));
  }
  check_peer(peer, "send");
  return Request(this, fabric_.post_send(rank(), peer, tag, buffer, bytes), peer, true);
}

Request InprocComm::irecv(int peer, Tag tag, void* buffer, std::size_t bytes) {
  check_peer(peer, "receive");
  return Request(this, fabric_.post_recv(rank(), peer, tag, buffer, bytes), peer, false);
}

void InprocComm::check_peer(int peer, std::string_view what) const {
  if (peer < 0 || peer >= size() || peer == rank()) {
    throw Error(ErrorKind::kSystem,
                fmt::format("in-process {} between rank {} and rank {} of {}: no such peer", what,
                            rank(), peer, size()));
  }
}

void InprocComm::progress() { sched_yield(); }

void InprocComm::poll_health(std::string_view what, const Deadline& deadline, int waiting_for) {
  if ((next_health_poll() & 0xf) != 0) return;
  throw_if_interrupted();
  if (deadline.expired()) {
    throw TimeoutError(fmt::format("{}: {} waited {:.0f} s for {} (stalled or unreachable)", what,
                                   bootstrap().describe(rank()), deadline.budget_s(),
                                   bootstrap().describe(waiting_for)));
  }
  bootstrap().check_health();
}

std::string InprocComm::transports(int peer) const {
  return peer == rank() ? std::string() : std::string("inproc/memcpy");
}

void InprocComm::close() { bootstrap().barrier("in-process teardown"); }

bool InprocComm::test(Request& request) {
  auto* op = static_cast<Fabric::Op*>(request.handle());
  if (!op->done.load(std::memory_order_acquire)) return false;
  std::string error = std::move(op->error);
  request.clear();
  fabric_.release(op);
  if (!error.empty()) {
    throw RemoteError(fmt::format(
        "in-process {} between {} and {} failed: {}", request.is_send() ? "send" : "receive",
        bootstrap().describe(rank()), bootstrap().describe(request.peer()), error));
  }
  return true;
}

void InprocComm::release(Request& request) noexcept {
  auto* op = static_cast<Fabric::Op*>(request.handle());
  request.clear();
  fabric_.release(op);
}

std::vector<std::exception_ptr> run_ranks(const JobShape& shape,
                                          const std::function<void(Comm&)>& body) {
  Fabric fabric(shape);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(shape.ranks));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(shape.ranks));
  for (int r = 0; r < shape.ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        InprocBootstrap boot(fabric, r);
        InprocComm comm(boot, fabric);
        body(comm);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        fabric.mark_failed(r, e.what());
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        fabric.mark_failed(r, "unknown exception");
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace ibscope::transport::inproc
