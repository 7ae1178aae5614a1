#pragma once
/// The TCP store served by rank 0: authenticates ranks by the job token, runs rounds (allgather,
/// gather to rank 0, fence, host layout), keeps what ranks publish (put/get), enforces the
/// per-round deadline (naming the ranks that never arrived), and turns a rank's lost connection
/// or abort into an abort message for every other rank.
///
/// Built for 10,000+ ranks: one thread on epoll; non-blocking sockets, each with a bounded input
/// buffer (one frame) and a queue of shared, already-encoded frames (an allgather's result is
/// encoded once, not once per rank); a rank that stops reading for the job timeout is lost.
/// Only allgather rounds send every rank's data to every rank; the others cost the root O(n)
/// bytes in all (docs/scale.md).
///
/// Descriptors: one per connection. The server raises the process's soft open-file limit to
/// the hard one (core/fd_limit.hpp) and warns when even that is below store_fds_needed(size).
/// Out of descriptors, it closes the oldest unauthenticated connection to accept a new one, or,
/// with none left, stops accepting for 100 ms at a time (never spins).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/core/clock.hpp"

namespace ibscope::bootstrap {

/// Descriptors rank 0 needs for a job of `ranks`: one per rank's connection, and a margin for
/// the rest of the process (the listener, epoll, its own connection, UCX, hwloc, log files).
inline constexpr std::uint64_t kStoreFdMargin = 64;
constexpr std::uint64_t store_fds_needed(int ranks) {
  return static_cast<std::uint64_t>(ranks) + kStoreFdMargin;
}

/// What strangers may cost the store. Defaults suit real jobs; tests shorten the deadline.
struct TcpStoreLimits {
  /// An unauthenticated connection must deliver a whole hello within this time of being
  /// accepted, however it trickles in (a stalled or slowloris stranger must not hold a slot).
  double hello_deadline_s = 10.0;
  /// At most this many unauthenticated connections wait at once (a flood must not exhaust
  /// descriptors); when full, the oldest is dropped with a "server busy" refusal, which a real
  /// rank answers by connecting again, so a flood delays ranks but cannot lock them out.
  std::size_t max_pending = 256;
  /// Wrong (or empty) job tokens checked per source address (an IPv4 address, an IPv6 /64) at
  /// once, and then per second. Past that, the source's hellos are refused as busy without a
  /// look at the token (guess_limiter.hpp); hellos with the right token spend nothing.
  double wrong_token_burst = 10;
  double wrong_token_per_s = 1;
  /// Refusals logged one line each per kind before they are only counted (refusal_log.hpp).
  int log_first_per_kind = 10;
  /// Seconds between summary lines of the refusals not logged one by one.
  double log_summary_every_s = 10.0;
};

/// What the server has sent and received so far (frames with headers), for the scale bench.
struct TcpStoreTraffic {
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t frames_received = 0;
  std::uint64_t frames_sent = 0;
};

class TcpStoreServer {
 public:
  /// Takes a listening socket. `token` may be empty (then only empty tokens are accepted).
  TcpStoreServer(net::Fd listener, int size, std::string token, double timeout_s,
                 TcpStoreLimits limits = {});
  /// Stops the server thread. noexcept.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  /// Blocks until every rank said goodbye or left after an abort, or the deadline passes.
  void wait_until_done(const Deadline& deadline) noexcept;
  std::uint16_t port() const noexcept { return port_; }
  /// Connections refused so far (wrong token, garbage, stalls, dropped in a flood); for tests
  /// and logs.
  int refused_count() const noexcept { return refused_.load(); }
  TcpStoreTraffic traffic() const noexcept;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
  std::atomic<int> refused_{0};
  std::thread thread_;
};

}  // namespace ibscope::bootstrap
