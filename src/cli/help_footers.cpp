#include "ibscope/cli/help_footers.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/descriptor.hpp"

namespace ibscope::cli {
namespace {

struct CommandHelp {
  std::string_view command;
  std::string_view examples;     ///< lines, each ending in a newline; empty: the command's own
  std::string_view exit_status;  ///< after "Exit status: "
};

constexpr std::string_view kSweepExit =
    "0 success, 1 the measurement failed (#wrong > 0, a lost peer, a deadline), 2 usage, "
    "128+N interrupted by signal N (130 Ctrl-C, 143 SIGTERM; the rows so far are kept).";

constexpr CommandHelp kHelp[] = {
    {"run",
     "  ibscope run                          # 2 local ranks: p2p sweep, then all-reduce\n"
     "  ibscope run --np 4 -e 64M --p2p-maxbytes 1M --p2p-tests latency,bw\n"
     "  srun --mpi=pmix -N 16 --ntasks-per-node=1 ibscope run --out results/fabric\n"
     "  mpirun -np 16 --map-by ppr:1:node ibscope run --skip-p2p\n",
     kSweepExit},
    {"p2p",
     "  ibscope p2p --np 2                                  # latency, bw, bibw: 1 B .. 4 MiB\n"
     "  ibscope p2p --np 2 --tests latency -e 64K\n"
     "  ibscope p2p --np 4 --tests bw,bibw -b 4K -e 16M    # every pair, disjoint rounds\n"
     "  srun --mpi=pmix -N 8 --ntasks-per-node=1 ibscope p2p --tests bw --pairs all\n",
     "0 success, 1 the measurement failed (a lost peer, a deadline), 2 usage, 128+N "
     "interrupted by signal N (the rows so far are kept)."},
    {"validate",
     "  ibscope validate results/*.json\n"
     "  ibscope validate results/ibscope-allreduce-20261203T101500Z-1a2b3c.json\n",
     "0 every file is valid, 2 a file is unreadable or malformed (the message names the file "
     "and the JSON path)."},
    {"recover",
     "  ibscope recover results/ibscope-allreduce-20261203T101500Z-1a2b3c.json.partial\n"
     "  ibscope recover /scratch/run7/ibscope-accept-20261203T101500Z-9f8e7d.json.partial "
     "--out results\n",
     "0 the results file is written (incomplete, with every row the checkpoint held), 1 it "
     "exists already or cannot be written, 2 not a checkpoint, malformed, or the checkpoint of a "
     "run that is still going (its rank 0 holds the lock <name>.json.lock)."},
    {"algorithms",
     "  ibscope algorithms\n"
     "  ibscope algorithms | grep allreduce\n",
     "0."},
    {"topo",
     "  ibscope topo --np 1                     # this host\n"
     "  ibscope topo --np 1 --format json       # the topology section as JSON\n"
     "  srun --mpi=pmix -N 8 --ntasks-per-node=1 ibscope topo   # one entry per host\n",
     "0 (a host without RDMA devices is not an error), 1 a lost peer or a deadline, 2 usage."},
    {"probe",
     "  ibscope probe write_bw --np 2 -d rxe0 -a          # one host, one device, 2 B .. 8 MiB\n"
     "  ibscope probe read_lat --np 2 -s 64 -n 10000\n"
     "  srun -N 16 ibscope probe write_lat --pairs all    # every node pair, a latency matrix\n"
     "  mpirun -np 8 --map-by node ibscope probe send_bw -d mlx5_0,mlx5_1 -B -q 4\n",
     "0 success, 1 the probe failed (no RDMA device or provider, a port down, a refused QP "
     "transition, a failed completion, a lost peer, a deadline), 2 usage, 128+N interrupted by "
     "signal N (the rows so far are kept)."},
    {"accept",
     "  srun --mpi=pmix -N 64 --ntasks-per-node=1 ibscope accept --out results/accept\n"
     "  srun --mpi=pmix -N 64 ibscope accept --transport ucx --expect-gbps 400 --link-kind ib\n"
     "  mpirun -np 64 --map-by ppr:1:node ibscope accept --transport ucx --expect-gbps 100 \\\n"
     "      --link-kind roce\n"
     "  ibscope accept --np 4 -A ring,dbt --ar-sizes 1M,64M   # one host: the straggler check\n"
     "  srun --mpi=pmix -N 64 ibscope accept \\\n"
     "      --prometheus-file /var/lib/node_exporter/textfile/ibscope.prom\n"
     "  srun --mpi=pmix -N 1344 --ntasks-per-node=8 ibscope accept --pairs random:8   # 8 rounds,"
     " rail to rail\n",
     "0 pass, 1 fail (a link, NIC or host failed its tests, a straggler, #wrong > 0, or a "
     "measurement error), 2 usage, 128+N interrupted by signal N (the links measured so far "
     "are kept as p2p/probe rows; no verdict)."},
    {"fit", "",
     "0 success, 2 usage (a malformed results file, nothing to fit, an output file that "
     "exists)."},
};

// The collectives' commands (their descriptors), then the others.
std::vector<CommandHelp> all_help() {
  std::vector<CommandHelp> help;
  for (const auto& d : collectives::descriptors()) {
    help.push_back({d.name, d.help_examples, kSweepExit});
  }
  help.insert(help.end(), std::begin(kHelp), std::end(kHelp));
  return help;
}

}  // namespace

void add_help_footers(CLI::App& app) {
  const std::vector<CommandHelp> help = all_help();
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (const auto& h : help) {
      if (sub->get_name() != h.command) continue;
      const std::string exit_line = "Exit status: " + std::string(h.exit_status);
      // CLI11 gives a subcommand its parent's footer: that one is not the command's own.
      const std::string own = sub->get_footer() == app.get_footer() ? "" : sub->get_footer();
      if (own.empty() && !h.examples.empty()) {
        sub->footer("Examples:\n" + std::string(h.examples) + exit_line);
      } else if (own.find("Exit status:") == std::string::npos) {
        sub->footer(own + (own.empty() || own.back() == '\n' ? "" : "\n") + exit_line);
      }
    }
  }
}

}  // namespace ibscope::cli
