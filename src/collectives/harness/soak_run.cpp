#include "ibscope/collectives/harness/soak_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ibscope/collectives/harness/call_layout.hpp"
#include "ibscope/collectives/harness/collective_workspace.hpp"
#include "ibscope/collectives/harness/verify.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/resident_memory.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/row_counters.hpp"
#include "ibscope/measure/timing.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

std::uint64_t soak_leak_bytes_per_s_from_env() {
  const char* v = std::getenv("IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S");
  if (v == nullptr) return 0;  // set but empty: parse_size_bytes says it is malformed
  return units::parse_size_bytes(v, "IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S");
}

namespace {

// Iterations per batch: one exchange per batch, so a batch is long enough that the exchange
// costs little, and short enough that windows close close to their time.
constexpr std::uint64_t kMaxBatchIterations = 20000;

// What rank 0 tells the others at the end of each batch (the first values of its exchange).
enum Control : int { kContinue = 0, kCloseWindow = 1, kStop = 2 };
// Every rank's exchange: control, next batch size, rank 0's time, RSS, then #wrong per case,
// then the times per case and iteration.
constexpr std::size_t kHeader = 4;

struct Case {
  std::string algorithm;
  CollectiveAlgorithm* algo = nullptr;
  DataType type;
  ReduceOp op;
  std::uint64_t bytes = 0;
  std::shared_ptr<const VerifiablePattern> pattern;
  CallLayout call, check;
  measure::TimeHistogram window_us;  // this window's times, max over ranks
  std::uint64_t window_wrong = 0;
};

// The test hook's leak, at a rate in bytes per second of the soak (not per iteration, so that
// the growth does not depend on how fast the host runs the calls): kept, so the memory stays
// resident, until the process ends.
class InjectedLeak {
 public:
  InjectedLeak(std::uint64_t bytes_per_s, Clock::time_point start)
      : bytes_per_s_(bytes_per_s), start_(start) {}
  void iteration() {
    if (bytes_per_s_ == 0) return;
    const auto due = static_cast<std::uint64_t>(seconds_between(start_, Clock::now()) *
                                                static_cast<double>(bytes_per_s_));
    if (due < leaked_ + kMinChunkBytes) return;
    const std::uint64_t bytes = due - leaked_;
    kept_.push_back(std::make_unique<std::byte[]>(bytes));
    std::memset(kept_.back().get(), 0x5a, bytes);  // resident, not just reserved
    leaked_ = due;
  }

 private:
  static constexpr std::uint64_t kMinChunkBytes = 64 * 1024;
  std::uint64_t bytes_per_s_;
  Clock::time_point start_;
  std::uint64_t leaked_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> kept_;
};

}  // namespace

std::vector<measure::SoakWindow> run_soak(transport::Comm& comm, const SoakOptions& options,
                                          const SoakWindowSink& sink) {
  const CollectiveSweepOptions& o = options.collective;
  bootstrap::Bootstrap& boot = comm.bootstrap();
  const Collective c = o.collective;
  const int me = comm.rank();
  // Buffers as the sweep has them: in the memory space, with host mirrors for verification
  // when that is not host memory.
  CollectiveWorkspace ws(comm, o, fmt::format("soak {}", name_of(c)), "--sizes");
  memory::MemorySpace& space = ws.space();
  const bool on_host = ws.on_host();
  std::byte* check_send = ws.check_send();
  std::byte* check_recv = ws.check_recv();
  const int corrupt_rank = fault_corrupt_rank_from_env();
  const std::vector<ReduceOp> no_op{ReduceOp::kSum};
  const auto& ops = reduces(c) ? o.ops : no_op;

  std::vector<Case> cases;
  for (DataType type : o.types) {
    for (ReduceOp op : ops) {
      for (std::uint64_t bytes : measure::sweep_sizes(o.sweep, size_of(type))) {
        for (const std::string& asked : ws.algorithms()) {
          const std::string name = ws.choose(asked, bytes).name;
          CollectiveAlgorithm& algo = ws.instance(name);
          // What the call moves (all-to-all: whole blocks), for the windows' size and busbw.
          const std::size_t count = call_count(c, bytes / size_of(type), comm.size());
          cases.push_back(Case{name,
                               &algo,
                               type,
                               op,
                               count * size_of(type),
                               pattern_for(c, type, op, comm.size()),
                               make_call_layout(c, me, comm.size(), false, ws.send(), ws.recv(),
                                                count, type, op, o.root),
                               make_call_layout(c, me, comm.size(), false, check_send, check_recv,
                                                count, type, op, o.root),
                               {},
                               0});
        }
      }
    }
  }
  const double busbw = busbw_factor(c, comm.size());
  const std::size_t nc = cases.size();
  // Reserved once: the soak's own buffers must not grow while it watches RSS.
  const std::size_t times_at = kHeader + nc;
  std::vector<double> mine(times_at + nc * kMaxBatchIterations);
  std::vector<measure::SoakWindow> windows;

  // The NICs' counters per window: read by each host's first rank as a window closes (outside
  // the timed calls), gathered to rank 0.
  measure::RowCounters window_counters(boot, o.nic_counters);
  window_counters.begin();
  boot.barrier("soak start");
  const auto t0 = Clock::now();
  InjectedLeak leak(soak_leak_bytes_per_s_from_env(), t0);
  std::uint64_t k = 1;
  std::uint64_t iteration = 0;  // the verification seed: the same on every rank
  double window_start_s = 0, batch_start_s = 0;
  while (true) {
    std::fill(mine.begin() + kHeader, mine.begin() + static_cast<std::ptrdiff_t>(times_at), 0.0);
    for (std::uint64_t i = 0; i < k; ++i) {
      ++iteration;
      for (std::size_t ci = 0; ci < nc; ++ci) {
        Case& cs = cases[ci];
        prepare_call(c, me, *cs.pattern, cs.check, false, iteration);
        if (!on_host) {
          space.from_host(ws.send(), check_send, cs.bytes);
          space.from_host(ws.recv(), check_recv, cs.bytes);
        }
        const auto start = Clock::now();
        cs.algo->run(cs.call.args, Deadline(o.timeout_s));
        mine[times_at + ci * k + i] = seconds_between(start, Clock::now());
        if (!on_host) space.to_host(check_recv, ws.recv(), cs.bytes);
        if (corrupt_rank == me) corrupt_one_element(cs.check);
        mine[kHeader + ci] +=
            static_cast<double>(count_wrong_call(c, comm.size(), *cs.pattern, cs.check, iteration));
      }
      leak.iteration();
    }
    // Rank 0 decides from its clock; the others' header values are ignored.
    const double now_s = seconds_between(t0, Clock::now());
    Control control = kContinue;
    std::uint64_t next_k = k;
    if (me == 0) {
      // Window w ends on the schedule, at (w + 1) x window, so a late close does not push the
      // later ones back; but it lasts half a window at least.
      auto end_of = [&](std::size_t w, double start_s) {
        return std::min(
            std::max(static_cast<double>(w + 1) * options.window_s, start_s + options.window_s / 2),
            options.duration_s);
      };
      const double window_end_s = end_of(windows.size(), window_start_s);
      if (now_s >= options.duration_s)
        control = kStop;
      else if (now_s >= window_end_s)
        control = kCloseWindow;
      // Batches of about a tenth of a window (20 ms .. 250 ms), not past the window's end.
      const double per_iteration_s =
          std::max(1e-7, (now_s - batch_start_s) / static_cast<double>(k));
      const double target_s = std::clamp(options.window_s / 10, 0.02, 0.25);
      const double next_end_s =
          control == kCloseWindow ? end_of(windows.size() + 1, now_s) : window_end_s;
      const double until_end_s = std::max(0.0, next_end_s - now_s);
      const double want = std::min(target_s, until_end_s) / per_iteration_s;
      next_k = static_cast<std::uint64_t>(
          std::clamp(std::ceil(want), 1.0, static_cast<double>(kMaxBatchIterations)));
    }
    mine[0] = control;
    mine[1] = static_cast<double>(next_k);
    mine[2] = now_s;
    mine[3] = static_cast<double>(resident_bytes());
    // Every rank's times go to rank 0 only (it keeps the windows); rank 0's header (control, next
    // batch size, its clock) goes to every rank.
    const auto all =
        measure::gather_doubles(boot, std::span(mine.data(), times_at + nc * k), "soak batch");
    const bootstrap::Bytes header = boot.broadcast(
        std::span(reinterpret_cast<const std::byte*>(mine.data()), kHeader * sizeof(double)),
        "soak batch control");
    if (header.size() != kHeader * sizeof(double)) {
      throw RemoteError("soak batch: malformed control from rank 0");
    }
    std::vector<double> root(kHeader);
    std::memcpy(root.data(), header.data(), header.size());
    for (std::size_t ci = 0; ci < nc; ++ci) {
      for (std::uint64_t i = 0; i < k; ++i) {
        double t = 0;
        for (const auto& r : all) t = std::max(t, r.at(times_at + ci * k + i));
        cases[ci].window_us.add(t * 1e6);
      }
      for (const auto& r : all) {
        cases[ci].window_wrong += static_cast<std::uint64_t>(r.at(kHeader + ci));
      }
    }
    const auto control_now = static_cast<Control>(static_cast<int>(root.at(0)));
    const double root_now_s = root.at(2);
    if (control_now != kContinue) {
      measure::SoakWindow w;
      w.index = static_cast<int>(windows.size());
      w.start_s = window_start_s;
      w.end_s = root_now_s;
      for (auto& cs : cases) {
        w.cases.push_back(
            measure::make_case_window(cs.algorithm, std::string(name_of(cs.type)),
                                      reduces(c) ? std::string(name_of(cs.op)) : "none", cs.bytes,
                                      cs.window_us, busbw, cs.window_wrong));
        cs.window_us.clear();
        cs.window_wrong = 0;
      }
      for (const auto& r : all) w.rss_bytes.push_back(static_cast<std::uint64_t>(r.at(3)));
      window_counters.end();
      w.nic_counters = window_counters.gather("soak window");
      window_counters.begin();
      window_start_s = root_now_s;
      if (sink) sink(w);
      windows.push_back(std::move(w));
    }
    if (control_now == kStop) break;
    k = static_cast<std::uint64_t>(root.at(1));
    batch_start_s = now_s;
  }
  return windows;
}

}  // namespace ibscope::collectives
