#include "ibscope/collectives/harness/collective_sweep.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <memory>
#include <thread>

#include "ibscope/collectives/harness/call_layout.hpp"
#include "ibscope/collectives/harness/collective_workspace.hpp"
#include "ibscope/collectives/harness/counts_call.hpp"
#include "ibscope/collectives/harness/verify.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/clock_sync.hpp"
#include "ibscope/measure/row_counters.hpp"
#include "ibscope/measure/timing.hpp"
#include "ibscope/measure/warm_up.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

namespace {

constexpr std::string_view kDelayVariable = "IBSCOPE_FAULT_DELAY_RANK";
constexpr std::string_view kCorruptVariable = "IBSCOPE_FAULT_CORRUPT_RANK";
constexpr std::string_view kMisplaceVariable = "IBSCOPE_FAULT_MISPLACE";

std::optional<std::string> hook_value(std::string_view variable) {
  const char* v = std::getenv(std::string(variable).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string misplace_grammar() {
  std::string names;
  for (misplace::Fault f : misplace::kAllFaults) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", misplace::name_of(f));
  }
  return fmt::format("<rank>:<fault>, the fault one of {}", names);
}

}  // namespace

FaultDelay parse_fault_delay(std::string_view value) {
  constexpr std::string_view kGrammar = "<rank>:<microseconds>, rank >= 0 and microseconds >= 0";
  const auto colon = value.find(':');
  if (colon == std::string_view::npos) {
    parse_hook_integer(kDelayVariable, value, "", 0, kGrammar);  // throws
  }
  FaultDelay d;
  d.rank = parse_hook_integer(kDelayVariable, value, value.substr(0, colon), 0, kGrammar);
  d.us = parse_hook_number(kDelayVariable, value, value.substr(colon + 1), 0, kGrammar);
  return d;
}

int parse_fault_corrupt_rank(std::string_view value) {
  return parse_hook_integer(kCorruptVariable, value, value, 0, "<rank>, rank >= 0");
}

FaultMisplace parse_fault_misplace(std::string_view value) {
  const std::string grammar = misplace_grammar();
  const auto colon = value.find(':');
  if (colon == std::string_view::npos) {
    parse_hook_integer(kMisplaceVariable, value, "", 0, grammar);  // throws
  }
  FaultMisplace m;
  m.rank = parse_hook_integer(kMisplaceVariable, value, value.substr(0, colon), 0, grammar);
  const auto fault = misplace::fault_named(value.substr(colon + 1));
  if (!fault) parse_hook_integer(kMisplaceVariable, value, "", 0, grammar);  // throws
  m.fault = *fault;
  return m;
}

FaultDelay fault_delay_from_env() {
  const auto v = hook_value(kDelayVariable);
  return v ? parse_fault_delay(*v) : FaultDelay{};
}

int fault_corrupt_rank_from_env() {
  const auto v = hook_value(kCorruptVariable);
  return v ? parse_fault_corrupt_rank(*v) : -1;
}

std::optional<FaultMisplace> fault_misplace_from_env() {
  const auto v = hook_value(kMisplaceVariable);
  if (!v) return std::nullopt;
  return parse_fault_misplace(*v);
}

void check_collective_fault_hooks(int job_ranks) {
  if (const auto v = hook_value(kDelayVariable)) {
    check_hook_rank(kDelayVariable, *v, parse_fault_delay(*v).rank, job_ranks);
  }
  if (const auto v = hook_value(kCorruptVariable)) {
    check_hook_rank(kCorruptVariable, *v, parse_fault_corrupt_rank(*v), job_ranks);
  }
  if (const auto v = hook_value(kMisplaceVariable)) {
    check_hook_rank(kMisplaceVariable, *v, parse_fault_misplace(*v).rank, job_ranks);
  }
}

namespace {

measure::CollectiveRow make_row(const transport::Comm& comm, const CollectiveSweepOptions& o,
                                const std::string& algorithm, const std::string& selected_by,
                                DataType type, ReduceOp op, bool in_place, std::uint64_t bytes,
                                const measure::RowTiming& timing,
                                std::optional<std::uint64_t> wrong) {
  measure::CollectiveRow row;
  row.collective = o.collective;
  row.algorithm = algorithm;
  row.selected_by = selected_by;
  row.type = type;
  if (reduces(o.collective)) row.op = op;
  row.root = descriptor_of(o.collective).has_root ? o.root : -1;
  row.in_place = in_place;
  row.size_bytes = bytes;
  row.count = bytes / size_of(type);
  row.ranks = comm.size();
  row.time_us = timing.time_s * 1e6;
  row.average = o.average;
  row.iteration_rank = timing.iteration_rank;
  row.samples_us.reserve(timing.samples_s.size());
  for (double s : timing.samples_s) row.samples_us.push_back(s * 1e6);
  row.iteration_us = measure::summarize(row.samples_us);
  row.stalls = measure::find_stalls(row.samples_us);
  row.algbw_gbps = units::to_gb_per_s(static_cast<double>(bytes), timing.time_s);
  row.busbw_gbps = row.algbw_gbps * busbw_factor(o.collective, comm.size());
  row.wrong = wrong;
  return row;
}

void warn_stalls(const measure::CollectiveRow& row, const std::string& what) {
  for (const measure::Stall& st : row.stalls) {
    log::warn("stall: {}: rank {}'s call {} took {:.3f} s (its median {:.3f} ms); the run went on",
              what, row.iteration_rank, st.iteration, st.time_us * 1e-6, st.median_us * 1e-3);
  }
}

}  // namespace

void run_collective_sweep(transport::Comm& comm, const CollectiveSweepOptions& o,
                          const CollectiveRowsSink& sink) {
  bootstrap::Bootstrap& boot = comm.bootstrap();
  const Collective c = o.collective;
  if (o.root < 0 || o.root >= comm.size()) {
    throw UsageError(fmt::format("--root {}: not a rank of this {}-rank job", o.root, comm.size()));
  }
  // Buffers in the sweep's memory space; verification fills and reads host mirrors, copied
  // to and from device memory around the verified run (the mirrors are the buffers on host).
  CollectiveWorkspace ws(comm, o, fmt::format("{} sweep", name_of(c)), "-e/--maxbytes");
  memory::MemorySpace& space = ws.space();
  const bool on_host = ws.on_host();
  std::byte* check_send = ws.check_send();
  std::byte* check_recv = ws.check_recv();
  const int corrupt_rank = fault_corrupt_rank_from_env();
  const FaultDelay delay = fault_delay_from_env();
  const auto misplace_fault = fault_misplace_from_env();
  std::uint64_t run_seed = 0;  // one per verified run, the same sequence on every rank
  bool first_row = true;       // the sweep's first measurement warms up longer (warm_up.hpp)
  measure::RowCounters row_counters(boot, o.nic_counters);
  const std::vector<ReduceOp> no_op{ReduceOp::kSum};
  const auto& ops = reduces(c) ? o.ops : no_op;

  std::size_t total_steps = 0, steps_done = 0;
  for (DataType type : o.types) {
    total_steps +=
        ops.size() * measure::sweep_sizes(o.sweep, size_of(type)).size() * ws.algorithms().size();
  }
  for (DataType type : o.types) {
    const std::size_t es = size_of(type);
    for (ReduceOp op : ops) {
      const auto shared_pattern = pattern_for(c, type, op, comm.size());
      const VerifiablePattern& pattern = *shared_pattern;
      for (std::uint64_t bytes : measure::sweep_sizes(o.sweep, es)) {
        // What a call moves, and so the rows' size (all-to-all: whole blocks, as nccl-tests).
        const std::size_t count = call_count(c, bytes / es, comm.size());
        // All-to-all-v: this rank's counts at this size, and the buffers' extent they use.
        std::optional<CountsCall> counted;
        if (descriptor_of(c).takes_counts) {
          counted = counts_call(o.counts.get(), comm.size(), comm.rank(), count);
        }
        const AlltoallvPlan* plan = counted ? &counted->plan : nullptr;
        const std::uint64_t copy_bytes =
            counted ? std::max<std::uint64_t>(bytes, counted->max_rank_count * es) : bytes;
        for (const std::string& asked : ws.algorithms()) {
          if (o.progress) {
            o.progress(fmt::format("{} {} {} {} {}", name_of(c), asked, name_of(type), name_of(op),
                                   units::format_size(bytes)),
                       steps_done, total_steps);
          }
          ++steps_done;
          const AlgorithmChoice choice = ws.choose(asked, bytes);
          const std::string& name = choice.name;
          const std::string& selected_by = choice.selected_by;
          CollectiveAlgorithm& algo = ws.instance(name);
          std::vector<measure::CollectiveRow> rows;
          for (bool in_place : {false, true}) {
            if ((in_place && !o.in_place) || (!in_place && !o.out_of_place)) continue;
            if (in_place && !descriptor_of(c).has_in_place) continue;
            const CallLayout l = make_call_layout(c, comm.rank(), comm.size(), in_place, ws.send(),
                                                  ws.recv(), count, type, op, o.root, plan);
            const CallLayout check =
                make_call_layout(c, comm.rank(), comm.size(), in_place, check_send, check_recv,
                                 count, type, op, o.root, plan);
            const std::string what =
                fmt::format("{} {} {} {} {} B {}", name_of(c), name, name_of(type), name_of(op),
                            bytes, in_place ? "in-place" : "out-of-place");
            std::optional<std::uint64_t> wrong;
            if (o.check) {
              ++run_seed;
              prepare_call(c, comm.rank(), pattern, check, in_place, run_seed);
              if (!on_host) {
                space.from_host(ws.send(), check_send, copy_bytes);
                space.from_host(ws.recv(), check_recv, copy_bytes);
              }
              boot.barrier(what);
              algo.run(l.args, Deadline(o.timeout_s));
              if (!on_host) space.to_host(check_recv, ws.recv(), copy_bytes);
              if (corrupt_rank == comm.rank()) corrupt_one_element(check);
              if (misplace_fault && misplace_fault->rank == comm.rank()) {
                misplace_output(check, comm.size(), misplace_fault->fault, pattern);
              }
              wrong = measure::sum_over_ranks(
                  boot, count_wrong_call(c, comm.size(), pattern, check, run_seed), what);
            }
            row_counters.begin();
            boot.barrier(what);
            // The time floor first, then the -w calls right before the timed loop: they absorb
            // the skew with which the ranks leave the floor's last bootstrap round.
            const bool delayed = delay.rank == comm.rank();
            auto before_call = [&] {
              if (delayed) {
                std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(delay.us));
              }
            };
            auto call = [&] { algo.run(l.args, Deadline(o.timeout_s)); };
            const double floor_s = first_row && o.warmup_min_s > 0
                                       ? std::max(o.warmup_min_s, measure::kFirstWarmupMinS)
                                       : o.warmup_min_s;
            first_row = false;
            measure::warm_up_for(
                boot, floor_s,
                [&](std::int64_t n) {
                  for (std::int64_t i = 0; i < n; ++i) {
                    before_call();
                    call();
                  }
                },
                what);
            std::vector<double> enter_s;  // warm-up entries included, dropped below
            if (o.record_arrivals) enter_s.reserve(static_cast<std::size_t>(o.warmup + o.iters));
            // A loop with work between its calls (the delay hook) or arrivals to record reads the
            // clock at each arrival too, which names the rank the others waited for; a plain
            // loop keeps one clock read per call.
            const measure::LoopTiming local =
                !delayed && !o.record_arrivals
                    ? measure::time_loop(o.warmup, o.iters, call)
                    : measure::time_loop_split(o.warmup, o.iters, before_call,
                                               [&](Clock::time_point arrival) {
                                                 if (o.record_arrivals)
                                                   enter_s.push_back(measure::seconds_of(arrival));
                                                 call();
                                               });
            row_counters.end();
            const measure::RowTiming timing =
                measure::combine_over_ranks(boot, local, o.average, what);
            rows.push_back(make_row(comm, o, name, selected_by, type, op, in_place, count * es,
                                    timing, wrong));
            if (counted) {
              rows.back().send_imbalance = counted->imbalance.send_max_over_mean;
              rows.back().recv_imbalance = counted->imbalance.recv_max_over_mean;
              rows.back().pair_imbalance = counted->imbalance.pair_max_over_mean;
            }
            rows.back().nic_counters = row_counters.gather(what);
            rows.back().mem = space.kind();
            rows.back().mem_path = o.mem_path;
            if (o.record_arrivals) {
              enter_s.erase(enter_s.begin(), enter_s.begin() + std::min<std::ptrdiff_t>(
                                                                   o.warmup, std::ssize(enter_s)));
              rows.back().enter_s =
                  measure::gather_doubles(boot, enter_s, what);  // [rank][iteration], rank 0
            }
            if (comm.rank() == 0) warn_stalls(rows.back(), what);
          }
          sink(rows);
        }
      }
    }
  }
}

}  // namespace ibscope::collectives
