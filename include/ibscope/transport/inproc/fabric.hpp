#pragma once
/// The in-process transport's shared state: a job of n ranks that are threads of one process.
/// Messages are memory copies between their buffers; the bootstrap's exchanges meet here too.
/// It exists so that every algorithm and collective can be tested for p = 1..64 without
/// processes, with faults injected below the real algorithm code (a slow rank, a rank that
/// dies); the multi-process tests over UCX stay the real check.
///
/// Matching follows transport/comm.hpp: a receive matches the first message of its source with
/// its exact tag. Sends are rendezvous: a send completes only once a receive has copied its data,
/// so an algorithm that reuses a send buffer too early is caught, as UCX's rendezvous protocol
/// would catch it on large messages. A message longer than the receive's buffer fails both
/// requests (UCX: "message truncated").
///
/// Placement: ranks sit in blocks of `ranks_per_host` on simulated hosts "inproc-host<h>", so
/// the intra-host arena and the two-tier algorithms see hosts as on a cluster.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::transport::inproc {

/// Faults injected below the algorithms.
struct Faults {
  int slow_rank = -1;                       ///< this rank sleeps before each send
  std::chrono::microseconds send_delay{0};  ///< how long
  int dying_rank = -1;                      ///< this rank dies at its n-th send
  int die_at_send = 1;                      ///< n (1: the first)
};

/// Thrown in the thread of the rank that Faults::dying_rank makes die: its stand-in for a crash.
class SimulatedDeath : public Error {
 public:
  using Error::Error;
};

struct JobShape {
  int ranks = 1;
  int ranks_per_host = 1;  ///< a divisor of ranks (block placement)
  double timeout_s = 60;   ///< every wait's deadline
  Faults faults;
};

/// A JobShape (designated initializers of an aggregate warn under -Wextra when members are left
/// out).
inline JobShape job_shape(int ranks, int ranks_per_host = 1, double timeout_s = 60,
                          Faults faults = {}) {
  JobShape s;
  s.ranks = ranks;
  s.ranks_per_host = ranks_per_host;
  s.timeout_s = timeout_s;
  s.faults = faults;
  return s;
}

class Fabric {
 public:
  /// Throws UsageError for a shape that is no block placement.
  explicit Fabric(const JobShape& shape);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  const JobShape& shape() const noexcept { return shape_; }
  int size() const noexcept { return shape_.ranks; }
  /// "inproc-host<h>" of rank `rank`.
  std::string host_of(int rank) const;

  /// One message or receive in flight. Owned by the Request that holds it (its handle).
  struct Op {
    std::atomic<bool> done{false};
    std::string error;  ///< set before done when the operation failed
    int owner = -1;     ///< the rank that posted it
    int peer = -1;
    Tag tag = 0;
    bool is_send = false;
    const std::byte* send_buffer = nullptr;
    std::byte* recv_buffer = nullptr;
    std::size_t bytes = 0;
  };
  /// Posts a send from `from` to `to` (complete once received), or a receive of `me` from
  /// `from`; either may complete at once.
  Op* post_send(int from, int to, Tag tag, const void* buffer, std::size_t bytes);
  Op* post_recv(int me, int from, Tag tag, void* buffer, std::size_t bytes);
  /// Withdraws a pending op (an error path) and frees it; a completed op is only freed.
  void release(Op* op) noexcept;

  /// Every rank contributes `mine`; all contributions by rank. Throws RemoteError when a rank
  /// died or aborted meanwhile, TimeoutError naming the ranks that never arrived.
  std::vector<bootstrap::Bytes> allgather(int rank, std::span<const std::byte> mine,
                                          std::string_view what, const Deadline& deadline);
  void publish(int rank, std::string_view key, std::span<const std::byte> value);
  /// What `rank` published under `key`, or nullopt.
  std::optional<bootstrap::Bytes> lookup(std::string_view key, int rank) const;

  /// Rank `rank` failed (its thread ended with an error, or it aborted the job): every other
  /// rank's next health check throws RemoteError naming it. The first one stays the verdict.
  void mark_failed(int rank, std::string_view why);
  /// "rank 3 (inproc-host1) failed: ..." once a rank failed.
  std::optional<std::string> failure() const;

 private:
  struct Mailbox {
    std::mutex m;
    std::deque<Op*> sends;  // arrived, not received yet, in order
    std::deque<Op*> recvs;  // posted, not matched yet, in order
  };
  static void deliver(Op& send, Op& recv);
  // Matches `op` with the first waiting op of the other side (same source, same tag) in the
  // receiver's box, or queues it there.
  Op* post(std::unique_ptr<Op> op);

  JobShape shape_;
  std::vector<std::unique_ptr<Mailbox>> boxes_;  // by receiving rank

  mutable std::mutex m_;  // the bootstrap's exchanges, publications and the failure
  std::condition_variable cv_;
  std::vector<bootstrap::Bytes> round_;
  std::vector<bool> arrived_;
  int arrivals_ = 0;
  std::uint64_t generation_ = 0;
  std::shared_ptr<const std::vector<bootstrap::Bytes>> last_;
  std::map<std::pair<std::string, int>, bootstrap::Bytes> published_;
  std::optional<std::string> failure_;
};

}  // namespace ibscope::transport::inproc
