#include "ibscope/measure/p2p.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstring>

#include "ibscope/core/aligned_buffer.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/buffer_budget.hpp"
#include "ibscope/measure/pair_schedule.hpp"
#include "ibscope/measure/pattern_p2p.hpp"
#include "ibscope/measure/row_counters.hpp"
#include "ibscope/measure/timing.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

namespace ibscope::measure {

LocalPath parse_local_path(std::string_view text) {
  if (text == "ucx") return LocalPath::kUcx;
  if (text == "shm") return LocalPath::kShm;
  throw UsageError(fmt::format("--local-path: '{}' is not one of: ucx, shm", text));
}

namespace {

enum class Test { kLatency, kBw, kBwReverse, kBibw };

std::string_view test_name(Test t) {
  switch (t) {
    case Test::kLatency:
      return "latency";
    case Test::kBw:
    case Test::kBwReverse:
      return "bw";
    case Test::kBibw:
      return "bibw";
  }
  return "?";
}

// Which side of the pair keeps the samples: the initiator (lower rank), except in the reverse
// bandwidth test, where the higher rank sends and times the windows.
bool records_samples(Test t, bool initiator) {
  return t == Test::kBwReverse ? !initiator : initiator;
}

// Tag steps: data and acknowledgements of one measurement never match each other.
constexpr std::uint32_t kDataStep = 1;
constexpr std::uint32_t kAckStep = 2;

memory::MemorySpace& space(const P2pOptions& o) {
  return o.memory ? *o.memory : *memory::host_space();
}

// What a pair on one host reports as its path with LocalPath::kShm.
constexpr std::string_view kShmPath = "intra-host shm: one copy by the receiver (ibscope arena)";

// The value a rank's arena flag takes at `step` of iteration `iter` of the test numbered `seq`:
// increasing over a rank's whole run, so a wait for ">= value" never sees a stale flag.
std::uint64_t flag_value(std::uint32_t seq, std::uint32_t iter, unsigned step) {
  return ((static_cast<std::uint64_t>(seq) + 1) << 32) | (static_cast<std::uint64_t>(iter) << 1) |
         step;
}

class PairRunner {
 public:
  /// `arena`: the intra-host arena for pairs on one host (LocalPath::kShm), else null. Collective
  /// over every rank when set (the buffers are shared allocations).
  PairRunner(transport::Comm& comm, const P2pOptions& o, std::size_t max_bytes,
             std::shared_ptr<intra_host::LocalArena> arena)
      : comm_(comm),
        o_(o),
        arena_(std::move(arena)),
        send_(allocate(max_bytes)),
        recv_(allocate(max_bytes)) {}

  /// Whether messages to `peer` go through the arena rather than UCX.
  bool through_arena(int peer) const noexcept {
    if (!arena_) return false;
    const auto& pl = arena_->placement();
    return peer / pl.local_size == pl.host_index && pl.local_size > 1;
  }

  /// Runs one test with `peer`; `initiator` is the lower rank; `seq` tags its messages (taken
  /// by every rank, also those sitting out the round, so that the counters never diverge). Returns
  /// samples in seconds on the side that records them (records_samples); the other side returns an
  /// empty vector.
  std::vector<double> run(Test t, int peer, bool initiator, std::size_t bytes, std::uint32_t seq) {
    const std::string what =
        fmt::format("p2p {} {} B with {}", test_name(t), bytes, comm_.bootstrap().describe(peer));
    const int total = o_.warmup + (t == Test::kLatency ? o_.latency_iters : o_.bw_iters);
    std::vector<double> samples;
    if (records_samples(t, initiator)) samples.reserve(static_cast<std::size_t>(total));
    // One clock read per iteration (about 30 ns on this VM, a fifth of an 8-byte one-way
    // latency over shared memory): an iteration's end is the next one's start, and its deadline
    // counts from there.
    const bool shm = through_arena(peer);
    auto t0 = Clock::now();
    for (int it = 0; it < total; ++it) {
      const Deadline deadline(o_.timeout_s, t0);
      const auto iter = static_cast<std::uint32_t>(it);
      if (shm) {
        run_through_arena(t, peer, initiator, bytes, seq, iter, what, deadline);
      } else {
        run_through_ucx(t, peer, initiator, bytes, seq, iter, what, deadline);
      }
      const auto t1 = Clock::now();
      const double s = seconds_between(t0, t1);
      t0 = t1;
      if (records_samples(t, initiator) && it >= o_.warmup)
        samples.push_back(t == Test::kLatency ? s / 2 : s);
    }
    return samples;
  }

 private:
  memory::SpaceBuffer allocate(std::size_t bytes) {
    return arena_ ? arena_->allocate(bytes) : space(o_).allocate(bytes);
  }

  void run_through_ucx(Test t, int peer, bool initiator, std::size_t bytes, std::uint32_t seq,
                       std::uint32_t iter, const std::string& what, const Deadline& deadline) {
    switch (t) {
      case Test::kLatency:
        ping_pong(peer, initiator, bytes, seq, iter, what, deadline);
        break;
      case Test::kBw:
        window(peer, initiator, !initiator, bytes, seq, iter, what, deadline);
        break;
      case Test::kBwReverse:
        window(peer, !initiator, initiator, bytes, seq, iter, what, deadline);
        break;
      case Test::kBibw:
        window(peer, true, true, bytes, seq, iter, what, deadline);
        break;
    }
  }

  // The same tests through the arena. A message is the sender's flag (its buffer holds the
  // data) and one copy by the receiver out of the sender's buffer into its own; a window is one
  // flag, `window` copies and an acknowledging flag, so that its time covers delivery as the
  // UCX window's does.
  void run_through_arena(Test t, int peer, bool initiator, std::size_t bytes, std::uint32_t seq,
                         std::uint32_t iter, const std::string& what, const Deadline& deadline) {
    const int li = peer % arena_->placement().local_size;
    const std::byte* theirs = arena_->peer(li, send_.data());
    auto receive = [&](int copies) {
      for (int c = 0; c < copies; ++c) {
        std::memcpy(recv_.data(), theirs, bytes);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // every copy is made
      }
    };
    using intra_host::Phase;
    if (t == Test::kLatency) {
      if (initiator) {
        arena_->signal(Phase::kArrived, flag_value(seq, iter, 0));
        arena_->wait_peer(li, Phase::kArrived, flag_value(seq, iter, 1), what, deadline);
        receive(1);
      } else {
        arena_->wait_peer(li, Phase::kArrived, flag_value(seq, iter, 0), what, deadline);
        receive(1);
        arena_->signal(Phase::kArrived, flag_value(seq, iter, 1));
      }
      return;
    }
    const bool sends = t == Test::kBibw || (t == Test::kBw) == initiator;
    const bool receives = t == Test::kBibw || !sends;
    if (sends) arena_->signal(Phase::kArrived, flag_value(seq, iter, 0));
    if (receives) {
      arena_->wait_peer(li, Phase::kArrived, flag_value(seq, iter, 0), what, deadline);
      receive(o_.window);
      arena_->signal(Phase::kArrived, flag_value(seq, iter, 1));
    }
    if (sends) arena_->wait_peer(li, Phase::kArrived, flag_value(seq, iter, 1), what, deadline);
  }

  void ping_pong(int peer, bool initiator, std::size_t bytes, std::uint32_t seq, std::uint32_t iter,
                 const std::string& what, const Deadline& deadline) {
    const int me = comm_.rank();
    if (initiator) {
      transport::Request reqs[2] = {
          comm_.irecv(peer, transport::make_tag(peer, seq, kDataStep, iter), recv_.data(), bytes),
          comm_.isend(peer, transport::make_tag(me, seq, kDataStep, iter), send_.data(), bytes)};
      comm_.wait_all(reqs, what, deadline);
    } else {
      auto r =
          comm_.irecv(peer, transport::make_tag(peer, seq, kDataStep, iter), recv_.data(), bytes);
      comm_.wait(r, what, deadline);
      auto s =
          comm_.isend(peer, transport::make_tag(me, seq, kDataStep, iter), send_.data(), bytes);
      comm_.wait(s, what, deadline);
    }
  }

  // One window: senders post `window` messages, receivers post as many receives; each receiver
  // then acknowledges, and each sender waits for the acknowledgement, so the window's time covers
  // delivery, not just local completion.
  void window(int peer, bool sends, bool receives, std::size_t bytes, std::uint32_t seq,
              std::uint32_t iter, const std::string& what, const Deadline& deadline) {
    const int me = comm_.rank();
    std::vector<transport::Request> reqs;
    reqs.reserve(static_cast<std::size_t>(2 * o_.window + 2));
    std::byte ack_in{}, ack_out{};
    if (sends) {
      reqs.push_back(comm_.irecv(peer, transport::make_tag(peer, seq, kAckStep, iter), &ack_in, 1));
    }
    if (receives) {
      for (int w = 0; w < o_.window; ++w) {
        reqs.push_back(comm_.irecv(peer, transport::make_tag(peer, seq, kDataStep, iter),
                                   recv_.data(), bytes));
      }
    }
    if (sends) {
      for (int w = 0; w < o_.window; ++w) {
        reqs.push_back(
            comm_.isend(peer, transport::make_tag(me, seq, kDataStep, iter), send_.data(), bytes));
      }
    }
    if (receives) {
      // Acknowledge only once every message of the window has arrived.
      const std::size_t first_recv = sends ? 1 : 0;
      comm_.wait_all(std::span(reqs).subspan(first_recv, static_cast<std::size_t>(o_.window)), what,
                     deadline);
      reqs.push_back(comm_.isend(peer, transport::make_tag(me, seq, kAckStep, iter), &ack_out, 1));
    }
    comm_.wait_all(reqs, what, deadline);
  }

  transport::Comm& comm_;
  const P2pOptions& o_;
  std::shared_ptr<intra_host::LocalArena> arena_;
  memory::SpaceBuffer send_, recv_;
};

P2pRow make_row(Test t, int a, int b, const bootstrap::Bootstrap& boot, std::size_t bytes,
                int window, const std::vector<double>& samples_s, std::string transports) {
  P2pRow row;
  row.test = std::string(test_name(t));
  row.rank_a = a;
  row.rank_b = b;
  row.host_a = boot.host(a);
  row.host_b = boot.host(b);
  row.size_bytes = bytes;
  row.window = t == Test::kLatency ? 1 : window;
  row.transports = std::move(transports);
  for (double s : samples_s) row.samples_us.push_back(s * 1e6);
  row.time_us = summarize(row.samples_us);
  row.stalls = find_stalls(row.samples_us);
  if (t != Test::kLatency && row.time_us.mean > 0) {
    const double moved = static_cast<double>(bytes) * window * (t == Test::kBibw ? 2 : 1);
    row.bw_gbps = units::to_gb_per_s(moved, row.time_us.mean * 1e-6);
    row.peak_bw_gbps = units::to_gb_per_s(moved, row.time_us.min * 1e-6);
    row.msg_rate_mps = window * (t == Test::kBibw ? 2 : 1) / row.time_us.mean;
  }
  return row;
}

}  // namespace

void run_p2p(transport::Comm& comm, const P2pOptions& o, const P2pRowsSink& sink) {
  bootstrap::Bootstrap& boot = comm.bootstrap();
  const int me = comm.rank();
  if (comm.size() < 2) {
    throw UsageError("p2p needs at least 2 ranks (use --np 2 or a launcher)");
  }
  if (!o.pattern.is_pairs()) {
    run_pattern_p2p(comm, o, sink);
    return;
  }
  if (o.window < 1) throw UsageError(fmt::format("--window {}: must be >= 1", o.window));
  const auto sizes = sweep_sizes(o.sweep, 1);
  const std::vector<PairRound> rounds = pair_rounds(o.pairs, comm.size());

  std::vector<Test> tests;
  if (o.latency) tests.push_back(Test::kLatency);
  if (o.bw) tests.push_back(Test::kBw);
  if (o.bw && o.bw_both_directions) tests.push_back(Test::kBwReverse);
  if (o.bibw) tests.push_back(Test::kBibw);

  const std::uint64_t max_bytes = sizes.empty() ? 0 : sizes.back();
  require_buffers_fit(comm,
                      BufferPlan{.what = fmt::format("p2p up to {}", units::format_size(max_bytes)),
                                 .size_flag = "p2p -e/--maxbytes",
                                 .bytes = max_bytes,
                                 .buffers = 2,
                                 .host_mirrors = 0,
                                 .kind = space(o).kind()});
  std::shared_ptr<intra_host::LocalArena> arena;
  if (o.local_path == LocalPath::kShm) {
    if (space(o).kind() != memory::MemKind::kHost) {
      throw UsageError("p2p --local-path shm: host memory only (--mem host)");
    }
    arena = intra_host::LocalArena::create(comm);  // collective; UsageError on a bad placement
  }
  PairRunner runner(comm, o, max_bytes, arena);
  RowCounters row_counters(boot, o.nic_counters);
  const std::size_t total_steps = rounds.size() * tests.size() * sizes.size();
  std::size_t steps_done = 0;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const auto& round = rounds[r];
    const int peer = partner_in_round(round, me);
    // Each rank connects only its partners, and tells rank 0 (which builds the rows) the path to
    // this round's partner: O(n) bytes at the root per round.
    std::string path;
    if (peer >= 0 && runner.through_arena(peer)) {
      path = kShmPath;
    } else if (peer >= 0) {
      comm.connect(std::span(&peer, 1));
      path = comm.transports(peer);
    }
    const auto paths = boot.gather(
        std::span(reinterpret_cast<const std::byte*>(path.data()), path.size()), "p2p transports");
    auto transports_of = [&](int a) {
      const bootstrap::Bytes& blob = paths.at(static_cast<std::size_t>(a));
      return std::string(reinterpret_cast<const char*>(blob.data()), blob.size());
    };
    for (Test t : tests) {
      for (std::size_t bytes : sizes) {
        if (o.progress) {
          o.progress(fmt::format("p2p {} {}, round {} of {} ({} pair(s))", test_name(t),
                                 units::format_size(bytes), r + 1, rounds.size(), round.size()),
                     steps_done, total_steps);
        }
        ++steps_done;
        row_counters.begin();
        boot.barrier("p2p round start");
        const std::uint32_t seq = comm.next_op_seq();
        std::vector<double> samples;
        if (peer >= 0) samples = runner.run(t, peer, me < peer, bytes, seq);
        row_counters.end();
        // Rank 0 builds every row (the others pass none to the sink).
        const auto all = gather_doubles(boot, samples, "p2p samples");
        const auto counters = row_counters.gather("p2p");
        std::vector<P2pRow> rows;
        for (auto [a, b] : me == 0 ? round : std::vector<std::pair<int, int>>{}) {
          if (t == Test::kBwReverse) std::swap(a, b);  // the row's rank_a is the sender
          rows.push_back(make_row(t, a, b, boot, bytes, o.window, all[static_cast<std::size_t>(a)],
                                  transports_of(a)));
          rows.back().nic_counters = deltas_of_hosts(counters, boot.host(a), boot.host(b));
          const P2pRow& row = rows.back();
          if (me == 0) {
            for (const Stall& st : row.stalls) {
              log::warn(
                  "stall: p2p {} {} B {} -> {}: iteration {} took {:.3f} s (median {:.3f} "
                  "ms); the run went on",
                  row.test, bytes, boot.describe(a), boot.describe(b), st.iteration,
                  st.time_us * 1e-6, st.median_us * 1e-3);
            }
          }
        }
        sink(rows);
      }
    }
  }
}

}  // namespace ibscope::measure
