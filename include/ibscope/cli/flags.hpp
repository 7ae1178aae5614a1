#pragma once
/// Flag definitions shared by subcommands, as CLI11 options bound to plain structs, and their
/// conversion (with validation: UsageError) into the measurement options.

#include <CLI/CLI.hpp>
#include <string>

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
  std::string nic;            ///< --nic (accept: -d/--ib-dev): each rank's UCX rail; "" = chosen
  bool no_bind = false;       ///< --no-bind: leave CPUs and memory unbound
  bool stop_on_usr1 = false;  ///< --stop-on-usr1: SIGUSR1 stops the run as SIGTERM does
  bool keep_samples = false;  ///< --keep-samples: every per-rank sample, whatever the job size
};

struct CollectiveFlags {
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  double factor = 2;
  std::string step_bytes = "0";
  std::string sizes;
  int iters = 20;
  int warmup = 5;
  double warmup_ms = 2;
  std::string average = "1";
  int check = 1;
  std::string type = "float";
  std::string op = "sum";
  std::string algo = "ring";
  std::string chunk = "0";
  std::string tuning;
  int root = 0;
  std::string mem = "host";
  std::string mem_path = "auto";
  std::string stage_chunk = "1M";
};

struct P2pFlags {
  std::string min_bytes = "1";
  std::string max_bytes = "4M";
  double factor = 2;
  int latency_iters = 1000;
  int bw_iters = 20;
  int warmup = 10;
  int window = 64;
  std::string tests = "latency,bw,bibw";
  std::string pairs = "all";
  std::string mem = "host";
  std::string mem_path = "auto";
  std::string stage_chunk = "1M";
  std::string local_path = "ucx";
};

/// `short_quiet`: whether -q means --quiet (not for `probe`, where -q is perftest's QP count).
void add_common_flags(CLI::App& app, CommonFlags& f, bool short_quiet = true);
/// --nic and --no-bind: the UCX jobs' rail (measure/rail_setup.hpp). accept has its own -d and
/// --no-bind for probes and rails alike.
void add_rail_flags(CLI::App& app, CommonFlags& f);
/// The nccl-tests flags of one collective's sweep (--root only for broadcast).
void add_collective_flags(CLI::App& app, CollectiveFlags& f, Collective c);
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
