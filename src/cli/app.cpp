#include "ibscope/cli/app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <set>

#include "ibscope/build_info.hpp"
#include "ibscope/cli/accept_command.hpp"
#include "ibscope/cli/flags.hpp"
#include "ibscope/cli/help_footers.hpp"
#include "ibscope/cli/job.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/cli/probe_command.hpp"
#include "ibscope/cli/run_command.hpp"
#include "ibscope/cli/soak_command.hpp"
#include "ibscope/cli/sweep_bodies.hpp"
#include "ibscope/cli/topo_command.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/output/console.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/transport/ucx/context.hpp"

namespace ibscope::cli {
namespace {

constexpr int kMaxRanksForValidation = 1 << 20;

int list_algorithms() {
  // The cost of each at a reference point makes the formulas concrete: 2 us and 10 GB/s per
  // link, 8 ranks, 1 MiB.
  const LinkCost ref{2e-6, 1e-10, 0};
  fmt::print("# {:<15} {:<6} {:>14}  {}\n", "collective", "algo", "cost(us)@ref", "description");
  for (Collective c : kAllCollectives) {
    for (const auto& a : algorithms_for(c)) {
      fmt::print("  {:<15} {:<6} {:>14.1f}  {}\n", name_of(c), a.name,
                 a.cost_s(ref, 1 << 20, 8) * 1e6, a.description);
    }
  }
  fmt::print(
      "# cost@ref: the alpha-beta model of each algorithm's file for 8 ranks, 1 MiB, "
      "alpha 2 us, 10 GB/s per link, no reduction cost.\n"
      "# -A auto without --tuning: all-reduce uses rd up to 16 KiB, rhd up to 512 KiB, "
      "ring above (where registered); the other collectives use ring.\n");
  return 0;
}

int validate_files(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    const auto doc = results::load(f);
    fmt::print("{}: valid ibscope results (schema {}, {} collective rows, {} p2p rows, {})\n", f,
               doc.schema_version, doc.collectives.rows.size(), doc.p2p.rows.size(),
               doc.complete ? "complete" : "INCOMPLETE");
  }
  return 0;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{
      "ibscope: measures what the network contributes to distributed GPU training.\n"
      "Runs under srun/mpirun across nodes, or forks --np local ranks on this host."};
  app.set_version_flag("--version", fmt::format("ibscope {} ({}, {})", build::kVersion,
                                                build::kGitSha, build::kBuildType));
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  ibscope run                          # embedded default: 2 local ranks, p2p + all-reduce\n"
      "  ibscope allreduce --np 4 -b 8 -e 256M -d float -o sum\n"
      "  ibscope allreduce --np 4 -A all      # every algorithm side by side + crossovers\n"
      "  ibscope allreduce --np 4 -A auto --tuning results/ibscope-allreduce-....json\n"
      "  ibscope broadcast --np 4 -r 2 -e 64M\n"
      "  ibscope p2p --np 2 --tests latency -e 64K\n"
      "  srun --mpi=pmix -N 16 ibscope run     # one rank per node across a cluster\n"
      "  ibscope topo --np 1                   # NUMA, NICs, GPUs and their distances\n"
      "  ibscope probe write_bw --np 2 -d rxe0 -a   # verbs RDMA WRITE bandwidth, 2 B .. 8 MiB\n"
      "  srun -N 16 ibscope probe write_lat --pairs all  # every node pair, latency matrix\n"
      "  ibscope accept --np 4 --transport ucx   # all pairs, verdicts per link and host\n"
      "  srun --mpi=pmix -N 64 ibscope accept  # a new fabric: pass/fail, the slow host named\n"
      "  ibscope fit results/*.json --json fits.json  # alpha-beta fits of every curve and link\n"
      "  ibscope predict --fit r2.json r3.json --nodes 4 --compare r4.json  # other scales\n"
      "  ibscope model --preset llama3-70b --inter-bw-gbps 48 --inter-links 8 --intra-bw-gbps 450\n"
      "  ibscope soak --np 4 --duration 8h   # verified all-reduce for hours: drift, RSS, #wrong\n"
      "  ibscope validate results/*.json\n"
      "Exit status: 0 success, 1 measurement failed (#wrong, lost peer, deadline), 2 usage.");

  CommonFlags common;
  CollectiveFlags ar_flags;
  P2pFlags p2p_flags;
  RunFlags run_flags;

  auto* run_cmd = app.add_subcommand(
      "run",
      "The main job, the whole suite in one results file: topology, every rank pair's "
      "links (verbs probes where RDMA is up, else UCX p2p), the all-reduce sweep over "
      "every algorithm (-A all unless given), then the fits and the network's share of "
      "a training step for a default workload laid out as this job");
  add_common_flags(*run_cmd, common);
  add_collective_flags(*run_cmd, ar_flags, Collective::kAllreduce);
  add_p2p_flags(*run_cmd, p2p_flags, "p2p-");
  add_run_flags(*run_cmd, run_flags);

  // One subcommand per collective, with nccl-tests' names as aliases.
  struct CollectiveCommand {
    Collective collective;
    const char* name;
    std::vector<const char*> aliases;
    const char* description;
    CLI::App* app = nullptr;
  };
  std::vector<CollectiveCommand> collective_cmds = {
      {Collective::kAllreduce,
       "allreduce",
       {"all_reduce"},
       "All-reduce sweep, nccl-tests columns (time, algbw, busbw, #wrong)"},
      {Collective::kReduceScatter,
       "reduce_scatter",
       {"reducescatter", "reduce-scatter"},
       "Reduce-scatter sweep (size = the full vector; busbw = algbw x (p-1)/p)"},
      {Collective::kAllgather,
       "allgather",
       {"all_gather"},
       "All-gather sweep (size = the full vector; busbw = algbw x (p-1)/p)"},
      {Collective::kBroadcast,
       "broadcast",
       {"bcast"},
       "Broadcast sweep from --root (busbw = algbw)"},
  };
  for (auto& cc : collective_cmds) {
    cc.app = app.add_subcommand(cc.name, cc.description);
    for (const char* alias : cc.aliases) cc.app->alias(alias);
    add_common_flags(*cc.app, common);
    add_collective_flags(*cc.app, ar_flags, cc.collective);
  }

  auto* p2p_cmd =
      app.add_subcommand("p2p", "Point-to-point latency and bandwidth over UCX between rank pairs");
  add_common_flags(*p2p_cmd, common);
  add_p2p_flags(*p2p_cmd, p2p_flags, "");

  SoakFlags soak_flags;
  auto* soak_cmd = app.add_subcommand(
      "soak",
      "All-reduce again and again for --duration, every iteration verified: per window "
      "p50/p99 time, busbw, #wrong and every rank's RSS; at the end drift, RSS growth "
      "and a PASS/FAIL verdict (docs/soak.md)");
  add_common_flags(*soak_cmd, common);
  add_soak_flags(*soak_cmd, soak_flags);

  std::vector<std::string> files;
  auto* validate_cmd = app.add_subcommand("validate", "Check results files against the schema");
  validate_cmd->add_option("files", files, "Results files")->required()->check(CLI::ExistingFile);

  auto* algos_cmd = app.add_subcommand("algorithms", "List the collective algorithms");

  auto* topo_cmd = app.add_subcommand(
      "topo",
      "Topology of every host in the job: NUMA nodes and CPUs, RDMA NICs (ports, rates, "
      "MTU, GIDs, PCIe path), GPUs and GPU<->NIC distance classes");
  add_common_flags(*topo_cmd, common);

  ProbeFlags probe_flags;
  auto* probe_cmd = app.add_subcommand(
      "probe",
      "libibverbs probes between rank pairs, as perftest measures them (RC write/read/"
      "send, bandwidth and latency); --pairs all runs every pair in disjoint rounds");
  add_common_flags(*probe_cmd, common, /*short_quiet=*/false);
  add_probe_flags(*probe_cmd, probe_flags);

  AcceptFlags accept_flags;
  auto* accept_cmd = app.add_subcommand(
      "accept",
      "Acceptance of a fabric: topology/link-state preflight, all-pairs latency and "
      "bandwidth in disjoint rounds (verbs or UCX), verdicts per link, NIC and host "
      "against the line rate and the other links, an all-reduce sweep naming "
      "stragglers. Exit 0 pass, 1 fail, 2 usage");
  add_common_flags(*accept_cmd, common);
  add_accept_flags(*accept_cmd, accept_flags);

  const OfflineCommand offline_cmds[] = {
      add_fit_command(app),    add_predict_command(app),           add_model_command(app),
      add_report_command(app), add_export_prometheus_command(app), add_man_command(app)};
  add_help_footers(app);  // examples and exit status of every subcommand (after they exist)

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    log::error("{} (see 'ibscope --help' or 'ibscope <command> --help')", e.what());
    return 2;
  }

  const std::vector<std::string> args(argv, argv + argc);
  try {
    if (*validate_cmd) return validate_files(files);
    if (*algos_cmd) return list_algorithms();
    for (const auto& oc : offline_cmds) {
      if (*oc.app) return oc.run();
    }
    const double timeout_s = parse_timeout_s(common);
    for (const auto& cc : collective_cmds) {
      if (!*cc.app) continue;
      const auto o = to_options(ar_flags, cc.collective, timeout_s);
      return run_job(cc.name, common, args, [&](JobContext& ctx) {
        if (ctx.results) ctx.results->collectives.params = params_of(o);
        return collective_body(ctx, o);
      });
    }
    if (*soak_cmd) {
      const auto o = to_options(soak_flags, timeout_s);
      return run_job("soak", common, args, [&](JobContext& ctx) { return soak_body(ctx, o); });
    }
    if (*accept_cmd) {
      const auto o = to_options(accept_flags, timeout_s);
      return run_job("accept", common, args, [&](JobContext& ctx) { return accept_body(ctx, o); });
    }
    if (*topo_cmd) {
      return run_job("topo", common, args, topo_body, JobTransport::kBootstrapOnly);
    }
    if (*probe_cmd) {
      // Usage errors before any rank starts; --pairs is checked against the job size later.
      to_options(probe_flags, kMaxRanksForValidation, timeout_s);
      return run_job(
          "probe", common, args, [&](JobContext& ctx) { return probe_body(ctx, probe_flags); },
          JobTransport::kBootstrapOnly);
    }
    if (*p2p_cmd) {
      const auto o = to_options(p2p_flags, timeout_s);
      return run_job("p2p", common, args, [&](JobContext& ctx) {
        if (ctx.results) ctx.results->p2p.params = params_of(o);
        return p2p_body(ctx, o);
      });
    }
    if (*run_cmd) {
      if (run_cmd->count("--algo") == 0) ar_flags.algo = "all";
      const RunPlan plan{run_flags, to_options(ar_flags, Collective::kAllreduce, timeout_s),
                         to_options(p2p_flags, timeout_s)};
      const bool table = common.format == "table" && !common.quiet;
      return run_job(
          "run", common, args, [&](JobContext& ctx) { return run_body(ctx, plan); },
          JobTransport::kUcx,
          [&](const std::filesystem::path& results) { analyse_run(results, run_flags, table); });
    }
  } catch (const Error& e) {
    log::error("{}", e.what());
    return exit_status(e.kind());
  }
  return 2;
}

}  // namespace ibscope::cli
