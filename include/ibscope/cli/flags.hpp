#pragma once
/// Flag definitions shared by subcommands, as CLI11 options bound to plain structs, and their
/// conversion (with validation: UsageError) into the measurement options.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "ibscope/cli/list_args.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/measure/p2p.hpp"

namespace ibscope::cli {

struct CommonFlags {
  int np = 2;
  std::string timeout = "60";
  std::string out_dir = "results";
  std::string format = "table";
  bool quiet = false;
  std::string nic;               ///< --nic (accept: -d/--ib-dev): each rank's UCX rail; "" = chosen
  bool no_bind = false;          ///< --no-bind: leave CPUs and memory unbound
  bool stop_on_usr1 = false;     ///< --stop-on-usr1: SIGUSR1 stops the run as SIGTERM does
  bool keep_samples = false;     ///< --keep-samples: every per-rank sample, whatever the job size
  bool no_nic_counters = false;  ///< --no-nic-counters: no NIC counters around the rows
  std::string db;                ///< --db: the history database ("" = ibscope.db in --out)
  bool no_history = false;       ///< --no-history: the run is not indexed
};

/// A size as a flag shows it, read back by units::parse_size_bytes: 8 -> "8", 1 MiB -> "1M",
/// 128 MiB -> "128M" (the largest of K, M, G that divides it).
std::string size_flag_text(std::uint64_t bytes);

/// The collective sweep's flags. Their defaults are collectives::CollectiveSweepOptions's (the
/// one owner), as flag text; add_collective_flags shows a field's starting value as its default.
struct CollectiveFlags {
  CollectiveFlags() : CollectiveFlags(collectives::CollectiveSweepOptions{}) {}
  explicit CollectiveFlags(const collectives::CollectiveSweepOptions& defaults);

  std::string min_bytes;
  std::string max_bytes;
  double factor = 0;
  std::string step_bytes;
  std::string sizes;
  int iters = 0;
  int warmup = 0;
  double warmup_ms = 0;
  std::string average;  ///< nccl-tests' -a number
  int check = 0;
  std::string type;
  std::string op;
  std::string algo;
  std::string chunk;
  std::string tuning;
  int root = 0;
  std::string counts = "uniform";  ///< alltoallv's --counts
  std::string mem;
  std::string mem_path;
  std::string stage_chunk;
};

/// p2p's flags; the defaults of the measurement are measure::P2pOptions's, as for
/// CollectiveFlags.
struct P2pFlags {
  P2pFlags() : P2pFlags(measure::P2pOptions{}) {}
  explicit P2pFlags(const measure::P2pOptions& defaults);

  std::string min_bytes;
  std::string max_bytes;
  double factor = 0;
  int latency_iters = 0;
  int bw_iters = 0;
  int warmup = 0;
  int window = 0;
  std::string tests = "latency,bw,bibw";
  std::string pairs;
  std::string mem;
  std::string mem_path;
  std::string stage_chunk;
  std::string local_path = "ucx";
  std::string pattern = "pairs";
  std::string pattern_hubs = "all";
};

/// `short_quiet`: whether -q means --quiet (not for `probe`, where -q is perftest's QP count).
void add_common_flags(CLI::App& app, CommonFlags& f, bool short_quiet = true);
/// --nic and --no-bind: the UCX jobs' rail (measure/rail_setup.hpp). accept has its own -d and
/// --no-bind for probes and rails alike.
void add_rail_flags(CLI::App& app, CommonFlags& f);
/// The nccl-tests flags of one collective's sweep (--root only for broadcast).
void add_collective_flags(CLI::App& app, CollectiveFlags& f, Collective c);
/// The flags a sweep shares with `ibscope soak`, in this order: -d/--datatype, -o/--op (a
/// collective that reduces), -A/--algo (`algo_help`: a format string whose {} is the
/// registered names, each followed by ", "), --tuning, --chunk, and the memory flags.
void add_collective_case_flags(CLI::App& app, CollectiveFlags& f, Collective c,
                               std::string_view algo_help);
/// --mem, --mem-path, --stage-chunk (with `prefix`, e.g. "p2p-").
void add_memory_flags(CLI::App& app, std::string& mem, std::string& path, std::string& stage_chunk,
                      const std::string& prefix, const std::string& mem_help);
/// `prefix` is "" for `ibscope p2p` and "p2p-" inside `ibscope run`.
void add_p2p_flags(CLI::App& app, P2pFlags& f, const std::string& prefix);

double parse_timeout_s(const CommonFlags& f);
collectives::CollectiveSweepOptions to_options(const CollectiveFlags& f, Collective c,
                                               double timeout_s);
measure::P2pOptions to_options(const P2pFlags& f, double timeout_s);

}  // namespace ibscope::cli
