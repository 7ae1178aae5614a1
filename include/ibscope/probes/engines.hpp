#pragma once
/// The measurement loops behind the probes, one per verb and metric (bandwidth.cpp,
/// write_latency.cpp, read_latency.cpp, send_latency.cpp). They run on one rank against the
/// connected peer of an RcLink and busy-poll under a ProgressGuard.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ibscope/probes/bandwidth_math.hpp"
#include "ibscope/probes/probe_test.hpp"
#include "ibscope/probes/progress_guard.hpp"
#include "ibscope/probes/rc_link.hpp"

struct ibv_wc;

namespace ibscope::probes {

/// Control words (RcLink::control_in): heartbeats count up from 1; the done word has the top
/// bit set. wr_ids of control writes carry kControlWrId so completions can tell them apart.
inline constexpr std::uint64_t kDoneFlag = 1ULL << 63;
inline constexpr std::uint64_t kControlWrId = 1ULL << 62;
/// How often a streaming initiator tells a passive target it is alive.
inline constexpr double kHeartbeatInterval_s = 0.1;

struct StreamSpec {
  Verb verb = Verb::kWrite;
  std::size_t size_bytes = 0;
  int messages_per_qp = 0;  // this side initiates this many per QP (0: it only receives)
  int signal_every = 100;
  std::uint64_t receives_per_qp = 0;  // SEND targets: messages to receive per QP
  bool send_done = false;  // write the done word to the peer once every message completed
};

struct StreamResult {
  double elapsed_s = 0;  // first post to last send completion (0 when not sending)
  std::uint64_t messages = 0;
  std::vector<CompletionMark> marks;
};

StreamResult run_stream(const RcLink& link, const StreamSpec& spec, ProgressGuard& guard);

/// Latency loops return one sample per timed iteration, in seconds, on the initiator (the
/// target returns none). Write and send: half the round trip; read: the whole read.
std::vector<double> run_write_latency(const RcLink& link, bool initiator, std::size_t size_bytes,
                                      int warmup, int iterations, ProgressGuard& guard);
std::vector<double> run_read_latency(const RcLink& link, bool initiator, std::size_t size_bytes,
                                     int warmup, int iterations, ProgressGuard& guard);
std::vector<double> run_send_latency(const RcLink& link, bool initiator, std::size_t size_bytes,
                                     int warmup, int iterations, ProgressGuard& guard);

/// Posts an RDMA WRITE of `value` into the peer's control word on QP `qp` (signalled, wr_id
/// kControlWrId | retires). The caller accounts for the send-queue slot.
void post_control_write(const RcLink& link, int qp, std::uint64_t value, int retires);
/// The initiator's side after its last message: writes the done word and waits for its
/// completion (the send queue must be empty).
void send_done(const RcLink& link, ProgressGuard& guard);
/// The target's side: spins on its control word until the peer's done word arrives; each
/// heartbeat restarts the guard's deadline.
void wait_for_done(const RcLink& link, ProgressGuard& guard);
/// Clears this side's control word (before the barrier that starts a size).
void reset_control(const RcLink& link) noexcept;

/// Throws CompletionError unless `wc` succeeded. `posted` names the operation the caller
/// posted ("RDMA_WRITE", "RECV"): an error completion's opcode field is undefined.
void check_completion(const ibv_wc& wc, const RcLink& link, std::string_view posted);

}  // namespace ibscope::probes
