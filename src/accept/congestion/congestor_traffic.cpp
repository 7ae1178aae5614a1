#include "congestor_traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "congestion_tags.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::accept::congestion {
namespace {

using transport::make_tag;
using transport::Request;

// Receives whose content nobody reads share a few buffers: an incast target with a thousand
// senders would otherwise hold a thousand messages' worth of memory.
constexpr std::size_t kReceiveSlots = 8;
// Messages per peer in one round: the leader's go-on costs a round trip per round, which
// several messages hide, so the congestors' links stay busy (one message per round kept a
// 100 Mbit/s shaped link ~55 % busy in the netns test).
constexpr int kMessagesPerRound = 4;

int position_of(std::span<const int> group, int rank) {
  return static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
}

}  // namespace

CongestorLoad run_congestor(transport::Comm& comm, CongestorPattern pattern,
                            std::span<const int> group, std::span<const int> victims,
                            std::uint64_t bytes, double timeout_s, double window_timeout_s) {
  const int me = comm.rank();
  const int g = static_cast<int>(group.size());
  const int pos = position_of(group, me);
  const int leader = group.front();
  const bool leading = me == leader;
  const int victim_leader = victims.front();
  const std::string name(name_of(pattern));
  const auto size = static_cast<std::size_t>(bytes);
  std::vector<std::byte> out(size, std::byte{0x5a});
  std::vector<std::byte> in(size * kReceiveSlots);
  auto slot = [&](std::size_t i) { return in.data() + (i % kReceiveSlots) * size; };

  CongestorLoad load;
  const Deadline window(window_timeout_s);
  std::byte stop_byte{0};
  Request stop;
  if (leading) {
    stop = comm.irecv(victim_leader, make_tag(victim_leader, kControlSeq, kStopStep, 0), &stop_byte,
                      1);
  }
  std::vector<Request> reqs, control;
  // The leader decides whether round `round` runs, and every congestor hears the same answer.
  auto agree = [&](std::uint64_t round, const Deadline& step) {
    const auto chunk = static_cast<std::uint32_t>(round & 0xfffff);
    std::byte go{1};
    control.clear();
    if (leading) {
      comm.progress();
      if (stop.test()) go = std::byte{0};
      comm.poll_health("accept congestion: the victims' stop", window, victim_leader);
      for (int k = 1; k < g; ++k) {
        const int peer = group[static_cast<std::size_t>(k)];
        control.push_back(comm.isend(peer, make_tag(me, kControlSeq, kGoOnStep, chunk), &go, 1));
      }
      comm.wait_all(control, "accept congestion: the congestor leader's go-on", step);
    } else {
      control.push_back(
          comm.irecv(leader, make_tag(leader, kControlSeq, kGoOnStep, chunk), &go, 1));
      comm.wait_all(control,
                    fmt::format("accept congestion: {} go-on from the congestor leader", name),
                    step);
    }
    return go != std::byte{0};
  };
  const Clock::time_point start = Clock::now();
  bool go_on = agree(0, Deadline(timeout_s));
  for (std::uint64_t round = 0; go_on; ++round) {
    const Deadline step(timeout_s);
    reqs.clear();
    const transport::Tag tag_out = make_tag(me, kDataSeq, static_cast<std::uint32_t>(round), 0);
    auto tag_from = [&](int peer) {
      return make_tag(peer, kDataSeq, static_cast<std::uint32_t>(round), 0);
    };
    std::uint64_t received = 0;
    // Several messages per peer and round (kMessagesPerRound), each into its own slot.
    for (int m = 0; m < kMessagesPerRound; ++m) {
      switch (pattern) {
        case CongestorPattern::kIncast:  // every other congestor into the leader
          if (leading) {
            for (int k = 1; k < g; ++k) {
              const int peer = group[static_cast<std::size_t>(k)];
              reqs.push_back(comm.irecv(peer, tag_from(peer), slot(reqs.size()), size));
              received += bytes;
            }
          } else {
            reqs.push_back(comm.isend(leader, tag_out, out.data(), size));
          }
          break;
        case CongestorPattern::kAlltoall: {
          // Pairwise exchange, one shift per round: over g-1 rounds every congestor sends to
          // every other, with one partner in and one out per rank at a time.
          const int shift = 1 + static_cast<int>(round % static_cast<std::uint64_t>(g - 1));
          const int to = group[static_cast<std::size_t>((pos + shift) % g)];
          const int from = group[static_cast<std::size_t>((pos - shift + g) % g)];
          reqs.push_back(comm.irecv(from, tag_from(from), slot(reqs.size()), size));
          reqs.push_back(comm.isend(to, tag_out, out.data(), size));
          received += bytes;
          break;
        }
        case CongestorPattern::kBroadcast:  // the leader to every other congestor
          if (leading) {
            for (int k = 1; k < g; ++k) {
              reqs.push_back(
                  comm.isend(group[static_cast<std::size_t>(k)], tag_out, out.data(), size));
            }
          } else {
            reqs.push_back(comm.irecv(leader, tag_from(leader), slot(reqs.size()), size));
            received += bytes;
          }
          break;
      }
    }
    // The next round's go-on while this round's data is in flight, so the load never pauses
    // for a control round trip (a victim's 30 ping-pongs fitted into such a pause).
    go_on = agree(round + 1, step);
    if (round == 1 && leading) {
      // A whole round has loaded the network and the next is already agreed: the victims may
      // start measuring (they send the stop only after this, so rounds 0-2 always run).
      control.clear();
      std::byte on{1};
      for (const int v : victims) {
        control.push_back(comm.isend(v, make_tag(me, kControlSeq, kStartedStep, 0), &on, 1));
      }
      comm.wait_all(control, "accept congestion: telling the victims the load is on", step);
    }
    comm.wait_all(reqs, fmt::format("accept congestion: {} round {}", name, round), step);
    load.bytes_received += received;
    ++load.rounds;
  }
  load.seconds = seconds_between(start, Clock::now());
  return load;
}

}  // namespace ibscope::accept::congestion
