#pragma once
/// The TCP store served by rank 0: authenticates ranks by the job token, runs allgather rounds,
/// enforces the per-round deadline (naming the ranks that never arrived), and turns a rank's
/// lost connection or abort into an abort message for every other rank. One thread, poll().

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/core/clock.hpp"

namespace ibscope {

class TcpStoreServer {
 public:
  /// Takes a listening socket. `token` may be empty (then only empty tokens are accepted).
  TcpStoreServer(net::Fd listener, int size, std::string token, double timeout_s);
  /// Stops the server thread. noexcept.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  /// Blocks until every rank said goodbye or left after an abort, or the deadline passes.
  void wait_until_done(const Deadline& deadline) noexcept;
  std::uint16_t port() const noexcept { return port_; }
  /// Connections refused so far (wrong token, garbage, stalls); for tests and logs.
  int refused_count() const noexcept { return refused_.load(); }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
  std::atomic<int> refused_{0};
  std::thread thread_;
};

}  // namespace ibscope
