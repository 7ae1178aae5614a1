#include "ibscope/measure/pattern_p2p.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/buffer_budget.hpp"
#include "ibscope/measure/row_counters.hpp"
#include "ibscope/measure/timing.hpp"

namespace ibscope::measure {
namespace {

constexpr std::uint32_t kPatternDataStep = 1;
constexpr std::uint32_t kPatternAckStep = 2;

// A flow this rank sends: one window in flight, then the receiver's acknowledgement.
struct PatternOutFlow {
  int peer = -1;
  int windows_posted = 0;
  std::vector<transport::Request> window;
  transport::Request ack;
  std::byte ack_in{};
  double done_s = -1;
};

// A flow this rank receives: every message posted up front, acknowledged once all arrived.
struct PatternInFlow {
  int peer = -1;
  std::vector<transport::Request> messages;
  std::size_t arrived = 0;
  transport::Request ack;
  std::byte ack_out{};
  bool acked = false;
};

struct PatternStreamPlan {
  std::size_t bytes = 0;
  int window = 1;
  int windows = 1;  // per flow
  std::uint32_t seq = 0;
  double timeout_s = 60;
};

// Streams this rank's part of one round: `flows` are (sender rank, receiver rank). Returns the
// time of each flow this rank sends, in the order of `flows`, in seconds from `t0`. One event
// loop serves sends, receives and acknowledgements, so a rank that both sends and receives
// (bisection) acknowledges its senders as soon as their last message lands.
std::vector<double> stream_pattern_round(transport::Comm& comm,
                                         const std::vector<std::pair<int, int>>& flows,
                                         const PatternStreamPlan& plan, const std::byte* send,
                                         std::byte* recv, Clock::time_point t0) {
  const int me = comm.rank();
  std::size_t outs = 0, ins = 0;
  for (const auto& [src, dst] : flows) {
    outs += src == me ? 1 : 0;
    ins += dst == me ? 1 : 0;
  }
  // Sized once: the acknowledgement bytes live in the elements and must not move.
  std::vector<PatternOutFlow> out(outs);
  std::vector<PatternInFlow> in(ins);
  std::size_t o = 0, i = 0;
  for (const auto& [src, dst] : flows) {
    if (src == me) out[o++].peer = dst;
    if (dst == me) in[i++].peer = src;
  }
  const std::string what =
      fmt::format("p2p pattern stream of {} B x {} x {}", plan.bytes, plan.window, plan.windows);
  for (PatternOutFlow& f : out) {
    f.ack =
        comm.irecv(f.peer, transport::make_tag(f.peer, plan.seq, kPatternAckStep, 0), &f.ack_in, 1);
  }
  for (PatternInFlow& f : in) {
    const auto n = static_cast<std::size_t>(plan.window) * static_cast<std::size_t>(plan.windows);
    f.messages.reserve(n);
    for (std::size_t m = 0; m < n; ++m) {
      f.messages.push_back(comm.irecv(
          f.peer, transport::make_tag(f.peer, plan.seq, kPatternDataStep, 0), recv, plan.bytes));
    }
  }
  auto post_window = [&](PatternOutFlow& f) {
    f.window.clear();
    for (int w = 0; w < plan.window; ++w) {
      f.window.push_back(comm.isend(f.peer, transport::make_tag(me, plan.seq, kPatternDataStep, 0),
                                    send, plan.bytes));
    }
    ++f.windows_posted;
  };
  for (PatternOutFlow& f : out) post_window(f);

  // The deadline restarts whenever something completes: a shaped link may take long in all,
  // but it never stands still.
  Deadline deadline(plan.timeout_s);
  while (true) {
    bool moved = false, done = true;
    int waiting_for = -1;
    for (PatternOutFlow& f : out) {
      if (f.done_s >= 0) continue;
      done = false;
      const bool window_done =
          std::all_of(f.window.begin(), f.window.end(), [](auto& r) { return r.test(); });
      if (window_done && f.windows_posted < plan.windows) {
        post_window(f);
        moved = true;
      } else if (window_done && f.ack.test()) {
        f.done_s = seconds_between(t0, Clock::now());
        moved = true;
      }
      waiting_for = f.peer;
    }
    for (PatternInFlow& f : in) {
      if (!f.acked) {
        while (f.arrived < f.messages.size() && f.messages[f.arrived].test()) {
          ++f.arrived;
          moved = true;
        }
        if (f.arrived == f.messages.size()) {
          f.ack = comm.isend(f.peer, transport::make_tag(me, plan.seq, kPatternAckStep, 0),
                             &f.ack_out, 1);
          f.acked = true;
        }
      }
      if (!f.acked || !f.ack.test()) {
        done = false;
        waiting_for = f.peer;
      }
    }
    if (done) break;
    if (moved) {
      deadline = Deadline(plan.timeout_s);
      continue;
    }
    comm.progress();
    comm.poll_health(what, deadline, waiting_for);
  }
  std::vector<double> times;
  for (const PatternOutFlow& f : out) times.push_back(f.done_s);
  return times;
}

memory::MemorySpace& pattern_buffer_space(const P2pOptions& o) {
  return o.memory ? *o.memory : *memory::host_space();
}

}  // namespace

void run_pattern_p2p(transport::Comm& comm, const P2pOptions& o, const P2pRowsSink& sink) {
  bootstrap::Bootstrap& boot = comm.bootstrap();
  const int me = comm.rank();
  std::vector<int> unit_rank = o.pattern_units;
  if (unit_rank.empty()) {
    for (int r = 0; r < comm.size(); ++r) unit_rank.push_back(r);
  }
  const int units = static_cast<int>(unit_rank.size());
  validate_pattern(o.pattern, o.hubs, units, o.pattern_units.empty() ? "ranks" : "hosts");
  if (o.window < 1) throw UsageError(fmt::format("--window {}: must be >= 1", o.window));
  if (o.bw_iters < 1) throw UsageError(fmt::format("--iters {}: must be >= 1", o.bw_iters));
  const auto sizes = sweep_sizes(o.sweep, 1);
  const std::uint64_t max_bytes = sizes.empty() ? 0 : sizes.back();
  require_buffers_fit(
      comm, BufferPlan{.what = fmt::format("p2p --pattern up to {}", units::format_size(max_bytes)),
                       .size_flag = "p2p -e/--maxbytes",
                       .bytes = max_bytes,
                       .buffers = 2,
                       .host_mirrors = 0,
                       .kind = pattern_buffer_space(o).kind()});
  memory::SpaceBuffer send = pattern_buffer_space(o).allocate(max_bytes);
  memory::SpaceBuffer recv = pattern_buffer_space(o).allocate(max_bytes);
  RowCounters row_counters(boot, o.nic_counters);
  const std::string name = to_string(o.pattern);
  const int rounds = pattern_round_count(o.pattern, o.hubs, units);
  const std::size_t total_steps = static_cast<std::size_t>(rounds) * sizes.size();
  std::size_t steps_done = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::pair<int, int>> flows;  // ranks
    for (const Flow& f : pattern_round(o.pattern, o.hubs, units, r)) {
      flows.emplace_back(unit_rank[static_cast<std::size_t>(f.src)],
                         unit_rank[static_cast<std::size_t>(f.dst)]);
    }
    const int hub_unit = pattern_hub(o.pattern, o.hubs, units, r);
    const int hub = hub_unit < 0 ? -1 : unit_rank[static_cast<std::size_t>(hub_unit)];
    std::vector<int> peers;
    for (const auto& [src, dst] : flows) {
      if (src == me) peers.push_back(dst);
      if (dst == me) peers.push_back(src);
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    comm.connect(peers);
    // The path to this rank's first receiver, for its rows (O(n) bytes at the root).
    std::string path;
    for (const auto& [src, dst] : flows) {
      if (src == me) {
        path = comm.transports(dst);
        break;
      }
    }
    const auto paths = boot.gather(
        std::span(reinterpret_cast<const std::byte*>(path.data()), path.size()), "p2p transports");
    for (const std::size_t bytes : sizes) {
      if (o.progress) {
        o.progress(fmt::format("p2p {} {}, round {} of {} ({} flow(s))", name,
                               units::format_size(bytes), r + 1, rounds, flows.size()),
                   steps_done, total_steps);
      }
      ++steps_done;
      PatternStreamPlan plan{bytes, o.window, o.warmup, 0, o.timeout_s};
      if (o.warmup > 0) {
        boot.barrier("p2p pattern warm-up");
        plan.seq = comm.next_op_seq();
        stream_pattern_round(comm, flows, plan, send.data(), recv.data(), Clock::now());
      }
      row_counters.begin();
      boot.barrier("p2p pattern round start");
      plan.windows = o.bw_iters;
      plan.seq = comm.next_op_seq();
      const auto t0 = Clock::now();
      const std::vector<double> mine =
          stream_pattern_round(comm, flows, plan, send.data(), recv.data(), t0);
      row_counters.end();
      const auto all = gather_doubles(boot, mine, "p2p pattern flow times");
      const auto counters = row_counters.gather("p2p pattern");
      std::vector<P2pRow> rows;
      if (me == 0) {
        const double flow_bytes = static_cast<double>(bytes) * o.window * o.bw_iters;
        std::vector<double> seconds;
        std::vector<std::size_t> next(static_cast<std::size_t>(comm.size()), 0);
        for (const auto& [src, dst] : flows) {
          const auto& times = all.at(static_cast<std::size_t>(src));
          seconds.push_back(times.at(next[static_cast<std::size_t>(src)]++));
        }
        const std::vector<double> flow_bytes_all(flows.size(), flow_bytes);
        const RoundFigures fig = round_figures(flow_bytes_all, seconds);
        for (std::size_t f = 0; f < flows.size(); ++f) {
          const auto [src, dst] = flows[f];
          P2pRow row;
          row.test = "bw";
          row.rank_a = src;
          row.rank_b = dst;
          row.host_a = boot.host(src);
          row.host_b = boot.host(dst);
          row.size_bytes = bytes;
          row.window = o.window;
          const auto& blob = paths.at(static_cast<std::size_t>(src));
          row.transports = std::string(reinterpret_cast<const char*>(blob.data()), blob.size());
          // One sample: the flow's mean window time (the windows overlap with other flows',
          // so single windows are not timed).
          row.samples_us.push_back(seconds[f] * 1e6 / o.bw_iters);
          row.time_us = summarize(row.samples_us);
          row.bw_gbps = fig.flow_gbps[f];
          row.peak_bw_gbps = fig.flow_gbps[f];
          row.msg_rate_mps = seconds[f] > 0 ? o.window * o.bw_iters / (seconds[f] * 1e6) : 0;
          row.nic_counters = deltas_of_hosts(counters, row.host_a, row.host_b);
          row.pattern = PatternFlowInfo{.pattern = name,
                                        .round = r,
                                        .hub_host = hub >= 0 ? boot.host(hub) : "",
                                        .hub_rank = hub,
                                        .flows = static_cast<int>(flows.size()),
                                        .aggregate_bw_gbps = fig.aggregate_gbps,
                                        .fairness_jain = fig.fairness_jain};
          rows.push_back(std::move(row));
        }
      }
      sink(rows);
    }
  }
}

}  // namespace ibscope::measure
