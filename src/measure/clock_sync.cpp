#include "ibscope/measure/clock_sync.hpp"

#include <fmt/format.h>

#include <chrono>
#include <limits>

#include "ibscope/core/clock.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::measure {

ClockOffset estimate_offset(std::span<const ClockSample> samples) {
  ClockOffset best{0, std::numeric_limits<double>::infinity()};
  for (const ClockSample& s : samples) {
    const double half_rtt_s = (s.local_recv_s - s.local_send_s) / 2;
    if (half_rtt_s < 0 || half_rtt_s >= best.uncertainty_s) continue;
    best.uncertainty_s = half_rtt_s;
    best.offset_s = s.remote_s - (s.local_send_s + s.local_recv_s) / 2;
  }
  return best;
}

double seconds_of(Clock::time_point t) noexcept {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

double steady_now_s() noexcept { return seconds_of(Clock::now()); }

namespace {
constexpr std::uint32_t kPingStep = 1;
constexpr std::uint32_t kPongStep = 2;
}  // namespace

std::vector<ClockOffset> measure_clock_offsets(transport::Comm& comm, int samples_per_rank,
                                               double timeout_s) {
  const std::uint32_t seq = comm.next_op_seq();
  const int me = comm.rank();
  std::vector<ClockOffset> offsets;
  comm.bootstrap().barrier("clock offsets");
  if (me == 0) {
    offsets.resize(static_cast<std::size_t>(comm.size()));
    for (int peer = 1; peer < comm.size(); ++peer) {
      const std::string what =
          fmt::format("clock offset exchange with {}", comm.bootstrap().describe(peer));
      std::vector<ClockSample> samples;
      for (int k = 0; k < samples_per_rank; ++k) {
        const auto chunk = static_cast<std::uint32_t>(k);
        std::byte ping{};
        double remote_s = 0;
        ClockSample s;
        s.local_send_s = steady_now_s();
        transport::Request reqs[2] = {
            comm.irecv(peer, transport::make_tag(peer, seq, kPongStep, chunk), &remote_s,
                       sizeof remote_s),
            comm.isend(peer, transport::make_tag(0, seq, kPingStep, chunk), &ping, 1)};
        comm.wait_all(reqs, what, Deadline(timeout_s));
        s.local_recv_s = steady_now_s();
        s.remote_s = remote_s;
        samples.push_back(s);
      }
      offsets[static_cast<std::size_t>(peer)] = estimate_offset(samples);
    }
  } else {
    const std::string what =
        fmt::format("clock offset exchange with {}", comm.bootstrap().describe(0));
    for (int k = 0; k < samples_per_rank; ++k) {
      const auto chunk = static_cast<std::uint32_t>(k);
      std::byte ping{};
      auto r = comm.irecv(0, transport::make_tag(0, seq, kPingStep, chunk), &ping, 1);
      // Rank 0 visits the ranks in turn: the first ping may take a while to come.
      comm.wait(r, what, Deadline(timeout_s));
      const double now_s = steady_now_s();
      auto s = comm.isend(0, transport::make_tag(me, seq, kPongStep, chunk), &now_s, sizeof now_s);
      comm.wait(s, what, Deadline(timeout_s));
    }
  }
  comm.bootstrap().barrier("clock offsets done");
  return offsets;
}

}  // namespace ibscope::measure
