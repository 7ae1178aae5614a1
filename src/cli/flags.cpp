#include "ibscope/cli/flags.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "ibscope/cli/memory_request.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {

std::string size_flag_text(std::uint64_t bytes) {
  static constexpr std::pair<std::uint64_t, char> kUnits[] = {
      {1ULL << 30, 'G'}, {1ULL << 20, 'M'}, {1ULL << 10, 'K'}};
  for (const auto& [unit, suffix] : kUnits) {
    if (bytes != 0 && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

CollectiveFlags::CollectiveFlags(const collectives::CollectiveSweepOptions& d)
    : min_bytes(size_flag_text(d.sweep.min_bytes)),
      max_bytes(size_flag_text(d.sweep.max_bytes)),
      factor(d.sweep.factor),
      step_bytes(size_flag_text(d.sweep.step_bytes)),
      iters(d.iters),
      warmup(d.warmup),
      warmup_ms(d.warmup_min_s * 1e3),
      average(std::to_string(static_cast<int>(d.average))),
      check(d.check ? 1 : 0),
      type(name_of(d.types.front())),
      op(name_of(d.ops.front())),
      algo(d.algorithms.front()),
      chunk(size_flag_text(d.algorithm_options.chunk_bytes)),
      root(d.root),
      mem(memory::name_of(d.memory_request.kind)),
      mem_path(memory::name_of(d.memory_request.path)),
      stage_chunk(size_flag_text(d.memory_request.fragment_bytes)) {}

P2pFlags::P2pFlags(const measure::P2pOptions& d)
    : min_bytes(size_flag_text(d.sweep.min_bytes)),
      max_bytes(size_flag_text(d.sweep.max_bytes)),
      factor(d.sweep.factor),
      latency_iters(d.latency_iters),
      bw_iters(d.bw_iters),
      warmup(d.warmup),
      window(d.window),
      pairs(measure::to_string(d.pairs)),
      mem(memory::name_of(d.memory_sides.front().kind)),
      mem_path(memory::name_of(d.memory_sides.front().path)),
      stage_chunk(size_flag_text(d.memory_sides.front().fragment_bytes)) {}

void add_common_flags(CLI::App& app, CommonFlags& f, bool short_quiet) {
  app.add_option("--np", f.np,
                 "Ranks to start on this host when no launcher (srun, mpirun) started ibscope")
      ->default_val(2)
      ->check(CLI::Range(1, 4096));
  app.add_option("--timeout", f.timeout,
                 "Deadline for every wait (bootstrap, each collective, each transfer); "
                 "seconds or 500ms/2m")
      ->default_val("60");
  app.add_option("--out", f.out_dir, "Folder for the results file (never overwritten)")
      ->default_val("results");
  app.add_option("--format", f.format, "Console output: table, csv or json")
      ->default_val("table")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  app.add_flag(short_quiet ? "-q,--quiet" : "--quiet", f.quiet,
               "No banner or tables; errors and the results path only");
  app.add_flag("--stop-on-usr1", f.stop_on_usr1,
               "SIGUSR1 stops the run cleanly as SIGTERM does, keeping the rows measured "
               "(sbatch --signal=USR1@120: stop before the time limit); exit status 138");
  app.add_flag("--keep-samples", f.keep_samples,
               "Write every per-rank sample (straggler arrivals, soak RSS, UCX lanes per rank "
               "pair) even above 64 ranks, where the results file otherwise keeps summaries "
               "over the ranks (results/README.md)");
  app.add_flag("--no-nic-counters", f.no_nic_counters,
               "Do not read the NICs' counters around each row (docs/counters.md): no "
               "nic_counters in the results, no counter checks in accept");
  app.add_option("--db", f.db,
                 "The history database the run is indexed into after its results file is "
                 "written (default: ibscope.db in the --out folder; docs/history.md)")
      ->type_name("PATH");
  app.add_flag("--no-history", f.no_history, "Do not index the run into the history database");
}

void add_rail_flags(CLI::App& app, CommonFlags& f) {
  app.add_option("--nic", f.nic,
                 "RDMA device[:port] for each rank's UCX traffic, or a comma list from which "
                 "each rank takes entry local_rank % size (default: the NIC closest to the "
                 "rank's GPU, else the ACTIVE NICs in name order, one per local rank); sets "
                 "UCX_NET_DEVICES unless it is set");
  app.add_flag("--no-bind", f.no_bind,
               "Do not bind each rank's CPUs and memory to its NIC's NUMA node");
}

void add_collective_flags(CLI::App& app, CollectiveFlags& f, Collective c) {
  // Each flag shows its field's starting value (CollectiveSweepOptions' default) as default.
  app.add_option("-b,--minbytes", f.min_bytes, "Smallest message size (K/M/G suffixes)")
      ->default_val(f.min_bytes);
  app.add_option("-e,--maxbytes", f.max_bytes, "Largest message size")->default_val(f.max_bytes);
  app.add_option("-f,--stepfactor", f.factor, "Multiply the size by this between steps")
      ->default_val(f.factor);
  app.add_option("-i,--stepbytes", f.step_bytes,
                 "Add this to the size between steps (overrides -f)")
      ->default_val(f.step_bytes);
  app.add_option("--sizes", f.sizes,
                 "Comma list of message sizes, instead of -b/-e/-f (e.g. 0,4,12,1M)");
  app.add_option("-n,--iters", f.iters, "Timed iterations per size")
      ->default_val(f.iters)
      ->check(CLI::Range(1, 1000000));
  app.add_option("-w,--warmup_iters", f.warmup, "Untimed warm-up iterations per size")
      ->default_val(f.warmup)
      ->check(CLI::Range(0, 1000000));
  app.add_option("--warmup-ms", f.warmup_ms,
                 "Warm up each size for at least this long too (the first size at least 50 ms; "
                 "rank 0's clock, in rounds every rank agrees), before the -w calls: what a "
                 "transport sets up on first use (UCX's shared-memory receive slots) and the "
                 "ranks' placement on CPUs stay out of the timed calls; 0: -w only")
      ->default_val(f.warmup_ms)
      ->check(CLI::Range(0.0, 600000.0));
  app.add_option("-a,--average", f.average,
                 "How the ranks' loop times make the time column, as nccl-tests' -a: 0 rank 0's, "
                 "1 their average, 2 the minimum, 3 the maximum (or rank0, avg, min, max)")
      ->default_val(f.average);
  app.add_option("-c,--check", f.check, "Verify results (1) or not (0)")
      ->default_val(f.check)
      ->check(CLI::Range(0, 1));
  add_collective_case_flags(
      app, f, c,
      "Algorithm: {}a comma list, all (each side by side, and the measured crossovers saved as "
      "a tuning table), or auto (per size: --tuning table, else the default rule; see 'ibscope "
      "algorithms')");
  if (collectives::descriptor_of(c).has_root) {
    app.add_option("-r,--root", f.root, "Broadcast root rank")
        ->default_val(f.root)
        ->check(CLI::NonNegativeNumber);
  }
  if (collectives::descriptor_of(c).takes_counts) {
    app.add_option("--counts", f.counts,
                   "How each rank's bytes spread over the ranks: uniform; zipf:S[:seed] (each "
                   "sender's bytes over the ranks by a Zipf law of exponent S, hot ranks a "
                   "seeded permutation, like routed MoE tokens); or a file of p rows of p counts "
                   "or weights, one row per sender (docs/methodology.md). Each size is the mean "
                   "bytes per rank the matrix is scaled to")
        ->default_val(f.counts);
  }
}

void add_collective_case_flags(CLI::App& app, CollectiveFlags& f, Collective c,
                               std::string_view algo_help) {
  app.add_option("-d,--datatype", f.type,
                 "float, double, int32, int64, half, bfloat16, a comma list, or all")
      ->default_val(f.type);
  if (reduces(c)) {
    app.add_option("-o,--op", f.op, "sum, min, max, a comma list, or all")->default_val(f.op);
  }
  std::string names;
  for (const auto& a : collectives::algorithms_for(c)) names += fmt::format("{}, ", a.name);
  app.add_option("-A,--algo", f.algo, fmt::format(fmt::runtime(algo_help), names))
      ->default_val(f.algo);
  app.add_option("--tuning", f.tuning,
                 "Results file of an earlier '-A all' run whose tuning table -A auto uses")
      ->check(CLI::ExistingFile);
  app.add_option("--chunk", f.chunk, "Pipeline chunk size (0 = the algorithm's default)")
      ->default_val(f.chunk);
  add_memory_flags(app, f.mem, f.mem_path, f.stage_chunk, "",
                   "Buffers: host or cuda (GPU memory, one GPU per local rank, the closest to "
                   "the rank's NIC)");
}

void add_memory_flags(CLI::App& app, std::string& mem, std::string& path, std::string& stage_chunk,
                      const std::string& prefix, const std::string& mem_help) {
  // Each shows the flags' starting value (memory::MemoryRequest's default) as its default.
  app.add_option("--" + prefix + "mem", mem, mem_help)->default_val(mem);
  app.add_option("--" + prefix + "mem-path", path,
                 "How GPU buffers meet UCX: auto (direct when the UCX in use supports CUDA "
                 "memory, else staged), direct, or staged (through pinned host buffers, "
                 "pipelined; with host buffers: one extra copy per message)")
      ->default_val(path);
  app.add_option("--" + prefix + "stage-chunk", stage_chunk,
                 "Fragment size of staged messages (4K..1G); every fragment is copied and sent "
                 "separately, so copies overlap the network")
      ->default_val(stage_chunk);
}

void add_p2p_flags(CLI::App& app, P2pFlags& f, const std::string& prefix) {
  // `ibscope p2p` takes the nccl-tests short flags; inside `ibscope run` every p2p flag is long
  // and prefixed, e.g. --p2p-maxbytes.
  // Each flag shows its field's starting value (P2pOptions' default) as its default.
  const bool own = prefix.empty();
  auto name = [&](const char* own_names, const char* prefixed) {
    return own ? std::string(own_names) : "--" + prefix + prefixed;
  };
  app.add_option(name("-b,--minbytes", "minbytes"), f.min_bytes, "p2p: smallest message size")
      ->default_val(f.min_bytes);
  app.add_option(name("-e,--maxbytes", "maxbytes"), f.max_bytes, "p2p: largest message size")
      ->default_val(f.max_bytes);
  app.add_option(name("-f,--stepfactor", "stepfactor"), f.factor,
                 "p2p: size multiplier between steps")
      ->default_val(f.factor);
  app.add_option(name("-n,--iters", "iters"), f.latency_iters, "p2p: latency round trips per size")
      ->default_val(f.latency_iters)
      ->check(CLI::Range(1, 10000000));
  app.add_option("--" + prefix + "bw-iters", f.bw_iters, "p2p: timed windows per size")
      ->default_val(f.bw_iters)
      ->check(CLI::Range(1, 1000000));
  app.add_option(name("-w,--warmup_iters", "warmup"), f.warmup, "p2p: untimed iterations per size")
      ->default_val(f.warmup)
      ->check(CLI::Range(0, 1000000));
  app.add_option("--" + prefix + "window", f.window, "p2p: messages in flight per window")
      ->default_val(f.window)
      ->check(CLI::Range(1, 4096));
  app.add_option("--" + prefix + "tests", f.tests, "p2p: comma list of latency, bw, bibw")
      ->default_val(f.tests);
  app.add_option("--" + prefix + "pairs", f.pairs,
                 "p2p: all (every pair, in rounds of disjoint pairs) or first (ranks 0 and 1)")
      ->default_val(f.pairs);
  add_memory_flags(app, f.mem, f.mem_path, f.stage_chunk, prefix,
                   "p2p: buffers, host or cuda; per side as A,B (OSU's H/D: e.g. host,cuda; "
                   "then with --pairs first: rank 0 is A, rank 1 is B)");
  app.add_option("--" + prefix + "local-path", f.local_path,
                 "p2p: how pairs on one host move data: ucx (UCX's shared-memory transports) or "
                 "shm (buffers in shared memory, the receiver copies straight out of the "
                 "sender's: the single-copy path of -A hier; host memory, ranks in equal blocks "
                 "per host)")
      ->default_val(f.local_path);
  app.add_option("--" + prefix + "pattern", f.pattern,
                 "p2p: pairs (disjoint pairs, the tests above), incast:K (K senders into one "
                 "receiver at once, every receiver in turn), one-to-many:K (one sender to K "
                 "receivers at once) or bisection (the first half of the ranks streams to the "
                 "second half and back, all at once); patterns other than pairs run the bw test "
                 "only and report per-flow and aggregate bandwidth and Jain's fairness index")
      ->default_val(f.pattern);
  app.add_option("--" + prefix + "pattern-hubs", f.pattern_hubs,
                 "p2p --pattern incast/one-to-many: which ranks are hubs (receivers of incast, "
                 "senders of one-to-many): all (each in turn), sample:N (N spread evenly) or a "
                 "list such as 0,3")
      ->default_val(f.pattern_hubs);
}

namespace {

// "a,b,c" or "all": each item parsed by `parse`; "all" anywhere means every value.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, std::span<const T> all_values, Parse parse) {
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    if (item == "all") return {all_values.begin(), all_values.end()};
    out.push_back(parse(item));
  }
  return out;
}

}  // namespace

double parse_timeout_s(const CommonFlags& f) {
  return units::parse_duration_s(f.timeout, "--timeout");
}

collectives::CollectiveSweepOptions to_options(const CollectiveFlags& f, Collective c,
                                               double timeout_s) {
  collectives::CollectiveSweepOptions o;
  o.collective = c;
  o.root = f.root;
  o.sweep.min_bytes = units::parse_size_bytes(f.min_bytes, "-b/--minbytes");
  o.sweep.max_bytes = units::parse_size_bytes(f.max_bytes, "-e/--maxbytes");
  o.sweep.factor = f.factor;
  o.sweep.step_bytes = units::parse_size_bytes(f.step_bytes, "-i/--stepbytes");
  if (!f.sizes.empty()) {
    for (const auto& s : split_list(f.sizes)) {
      o.sweep.explicit_bytes.push_back(units::parse_size_bytes(s, "--sizes"));
    }
    o.sweep.max_bytes =
        *std::max_element(o.sweep.explicit_bytes.begin(), o.sweep.explicit_bytes.end());
  }
  o.iters = f.iters;
  o.warmup = f.warmup;
  o.warmup_min_s = f.warmup_ms * 1e-3;
  o.average = measure::parse_time_average(f.average, "-a/--average");
  o.check = f.check != 0;
  o.timeout_s = timeout_s;
  o.types = parse_list<DataType>(f.type, kAllDataTypes, parse_data_type);
  o.ops = parse_list<ReduceOp>(f.op, kAllReduceOps, parse_reduce_op);
  std::vector<std::string> all_algorithms;
  for (const auto& info : collectives::algorithms_for(c)) all_algorithms.emplace_back(info.name);
  o.algorithms = parse_list<std::string>(f.algo, all_algorithms, [c](const std::string& a) {
    if (a == collectives::kAutoAlgorithm) return a;
    return std::string(collectives::find_algorithm(c, a).name);
  });
  const auto asked = split_list(f.algo);
  o.skip_unavailable = std::find(asked.begin(), asked.end(), "all") != asked.end();
  if (!f.tuning.empty()) {
    if (std::find(o.algorithms.begin(), o.algorithms.end(), collectives::kAutoAlgorithm) ==
        o.algorithms.end()) {
      throw UsageError("--tuning is used only by -A auto: add -A auto, or drop --tuning");
    }
    o.tuning = results::load_tuning(f.tuning);
  }
  if (collectives::descriptor_of(c).takes_counts) {
    o.counts =
        std::make_shared<const collectives::CountsSpec>(collectives::load_counts_spec(f.counts));
  }
  o.memory_request = parse_memory_request(f.mem, f.mem_path, f.stage_chunk);
  o.algorithm_options.chunk_bytes = units::parse_size_bytes(f.chunk, "--chunk");
  // A chunk index has 20 bits in the tag (transport/ucx/comm.hpp).
  constexpr std::uint64_t kMaxChunks = 1ULL << 20;
  if (o.algorithm_options.chunk_bytes != 0 &&
      o.sweep.max_bytes / o.algorithm_options.chunk_bytes >= kMaxChunks) {
    throw UsageError(
        fmt::format("--chunk {}: {} would need more than {} chunks; use a larger "
                    "--chunk",
                    units::format_size(o.algorithm_options.chunk_bytes),
                    units::format_size(o.sweep.max_bytes), kMaxChunks));
  }
  // Validates the sweep now, before any rank starts.
  for (DataType t : o.types) {
    const auto sizes = measure::sweep_sizes(o.sweep, size_of(t));
    (void)sizes;
  }
  constexpr std::uint64_t kMaxMessageBytes = 64ULL << 30;
  if (o.sweep.max_bytes > kMaxMessageBytes) {
    throw UsageError(fmt::format("-e/--maxbytes {}: above the {} limit of one host buffer",
                                 units::format_size(o.sweep.max_bytes),
                                 units::format_size(kMaxMessageBytes)));
  }
  return o;
}

measure::P2pOptions to_options(const P2pFlags& f, double timeout_s) {
  measure::P2pOptions o;
  o.sweep.min_bytes = units::parse_size_bytes(f.min_bytes, "p2p -b/--minbytes");
  o.sweep.max_bytes = units::parse_size_bytes(f.max_bytes, "p2p -e/--maxbytes");
  o.sweep.factor = f.factor;
  o.latency_iters = f.latency_iters;
  o.bw_iters = f.bw_iters;
  o.warmup = f.warmup;
  o.window = f.window;
  o.pairs = measure::parse_pair_selection(f.pairs, measure::PairsSyntax::kAllFirst);
  o.timeout_s = timeout_s;
  const auto sides = split_list(f.mem);
  if (sides.size() > 2) {
    throw UsageError(fmt::format("p2p --mem '{}': one kind, or two (A,B)", f.mem));
  }
  o.memory_sides.clear();
  for (const auto& side : sides) {
    o.memory_sides.push_back(parse_memory_request(side, f.mem_path, f.stage_chunk));
  }
  if (o.memory_sides.size() == 2 && o.memory_sides[0].kind != o.memory_sides[1].kind &&
      o.pairs.mode != measure::PairsMode::kFirst) {
    throw UsageError(
        fmt::format("p2p --mem {}: memory per side needs --pairs first (rank 0 is "
                    "side A, rank 1 side B)",
                    f.mem));
  }
  o.local_path = measure::parse_local_path(f.local_path);
  if (o.local_path == measure::LocalPath::kShm) {
    for (const auto& side : o.memory_sides) {
      if (side.kind != memory::MemKind::kHost || side.path != memory::PathRequest::kAuto) {
        throw UsageError(
            fmt::format("p2p --local-path shm: host memory only, and no --mem-path (got --mem {} "
                        "--mem-path {})",
                        f.mem, f.mem_path));
      }
    }
  }
  o.pattern = measure::parse_traffic_pattern(f.pattern);
  o.hubs = measure::parse_hub_selection(f.pattern_hubs);
  if (!o.pattern.is_pairs()) {
    if (o.pairs.mode != measure::PairsMode::kAll) {
      throw UsageError(
          fmt::format("p2p --pattern {}: --pairs applies to --pattern pairs only", f.pattern));
    }
    if (o.local_path != measure::LocalPath::kUcx) {
      throw UsageError(
          fmt::format("p2p --pattern {}: every flow goes through UCX (no "
                      "--local-path shm)",
                      f.pattern));
    }
  }
  o.latency = o.bw = o.bibw = false;
  for (const auto& t : split_list(f.tests)) {
    if (t == "latency")
      o.latency = true;
    else if (t == "bw")
      o.bw = true;
    else if (t == "bibw")
      o.bibw = true;
    else
      throw UsageError(fmt::format("--tests: unknown test '{}' (latency, bw, bibw)", t));
  }
  (void)measure::sweep_sizes(o.sweep, 1);
  constexpr std::uint64_t kMaxMessageBytes = 16ULL << 30;
  if (o.sweep.max_bytes > kMaxMessageBytes) {
    throw UsageError(fmt::format("p2p -e/--maxbytes {}: above the {} limit",
                                 units::format_size(o.sweep.max_bytes),
                                 units::format_size(kMaxMessageBytes)));
  }
  return o;
}

}  // namespace ibscope::cli
