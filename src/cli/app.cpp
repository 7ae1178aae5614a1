#include "ibscope/cli/app.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ibscope/build_info.hpp"
#include "ibscope/cli/accept_command.hpp"
#include "ibscope/cli/command.hpp"
#include "ibscope/cli/command_names.hpp"
#include "ibscope/cli/flags.hpp"
#include "ibscope/cli/help_footers.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/cli/probe_command.hpp"
#include "ibscope/cli/run_command.hpp"
#include "ibscope/cli/soak_command.hpp"
#include "ibscope/cli/sweep_bodies.hpp"
#include "ibscope/cli/topo_command.hpp"
#include "ibscope/cli/watch_command.hpp"
#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fd_limit.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/history/indexer.hpp"
#include "ibscope/history/record.hpp"
#include "ibscope/job/job.hpp"
#include "ibscope/output/console.hpp"
#include "ibscope/results/loader.hpp"
#include "ibscope/results/results_file.hpp"

namespace ibscope::cli {
namespace {

constexpr int kMaxRanksForValidation = 1 << 20;

int list_algorithms() {
  // The cost of each at a reference point makes the formulas concrete: 2 us and 10 GB/s per
  // link, 8 ranks, 1 MiB.
  const collectives::LinkCost ref{2e-6, 1e-10, 0};
  std::size_t algo_width = 6;
  for (const auto& d : collectives::descriptors()) {
    for (const auto& a : collectives::algorithms_for(d.id)) {
      algo_width = std::max(algo_width, a.name.size());
    }
  }
  fmt::print("# {:<15} {:<{}} {:>14}  {}\n", "collective", "algo", algo_width, "cost(us)@ref",
             "description");
  for (const auto& d : collectives::descriptors()) {
    for (const auto& a : collectives::algorithms_for(d.id)) {
      fmt::print("  {:<15} {:<{}} {:>14.1f}  {}\n", d.name, a.name, algo_width,
                 a.cost_s(ref, 1 << 20, 8) * 1e6, a.description);
    }
  }
  std::string with_hier;  // the collectives whose default rule may pick hier (registered)
  for (const auto& d : collectives::descriptors()) {
    if (collectives::arena_algorithm(d.id).empty()) continue;
    with_hier += fmt::format("{}{}", with_hier.empty() ? "" : ", ", d.name);
  }
  fmt::print(
      "# cost@ref: the alpha-beta model of each algorithm's file for 8 ranks, 1 MiB, "
      "alpha 2 us, 10 GB/s per link, no reduction cost.\n"
      "# -A auto without --tuning: {} use hier with several ranks on one host, and from {} "
      "across hosts with several ranks per host (host memory, ranks in equal blocks per host); "
      "else allreduce uses rd up to 16 KiB, rhd up to 512 KiB, ring above (where registered), "
      "and the other collectives their first algorithm above.\n",
      with_hier, units::format_size(collectives::kHierAcrossHostsMinBytes));
  return 0;
}

int validate_files(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    const auto doc = results::load(f);
    if (doc.tool.name == "nccl-tests") {  // the loader reads it too (docs/nccl-tests.md)
      fmt::print(
          "{}: readable nccl-tests output, not an ibscope results file ({} collective rows "
          "read, {} warning(s))\n",
          f, doc.collectives.rows.size(), doc.warnings.size());
      continue;
    }
    fmt::print("{}: valid ibscope results (schema {}, {} collective rows, {} p2p rows, {})\n", f,
               doc.schema_version, doc.collectives.rows.size(), doc.p2p.rows.size(),
               doc.complete ? "complete" : "INCOMPLETE");
  }
  return 0;
}

// What the subcommands that run a job share: CLI11 binds each flag to one variable, and only one
// subcommand is parsed, so the subcommands that have a flag bind it to the same place.
struct JobFlags {
  CommonFlags common;
  CollectiveFlags collective;
  P2pFlags p2p;
  std::vector<std::string> argv;  ///< the command line, for the results file
};

// The common flags of `command`, parsed, as the job layer takes them. Throws UsageError (a bad
// --timeout) before any rank starts.
job::JobOptions job_options(const std::string& command, const JobFlags& j) {
  const CommonFlags& f = j.common;
  job::JobOptions o;
  o.command = command;
  o.argv = j.argv;
  o.np = f.np;
  o.timeout_s = parse_timeout_s(f);
  o.out_dir = f.out_dir;
  o.history = {!f.no_history, f.db};
  o.format = f.format == "json"  ? job::OutputFormat::kJson
             : f.format == "csv" ? job::OutputFormat::kCsv
                                 : job::OutputFormat::kTable;
  o.quiet = f.quiet;
  o.nic = f.nic;
  o.bind = !f.no_bind;
  o.stop_on_usr1 = f.stop_on_usr1;
  o.keep_samples = f.keep_samples;
  o.nic_counters = !f.no_nic_counters;
  return o;
}

Command add_run_command(CLI::App& app, JobFlags& j) {
  auto run_flags = std::make_shared<RunFlags>();
  auto* sub = app.add_subcommand(
      "run",
      "The main job, the whole suite in one results file: topology, every rank pair's "
      "links (verbs probes where RDMA is up, else UCX p2p), the all-reduce sweep over "
      "every algorithm (-A all unless given), small all-to-all sweeps, each NIC's loopback, "
      "an incast between hosts and the congestion test (each skipped with its reason where "
      "the job cannot run it), then the fits and the network's share of a training step for "
      "a default workload laid out as this job");
  add_common_flags(*sub, j.common);
  add_rail_flags(*sub, j.common);
  add_collective_flags(*sub, j.collective, Collective::kAllreduce);
  add_p2p_flags(*sub, j.p2p, "p2p-");
  add_run_flags(*sub, *run_flags);
  return {sub, [sub, &j, run_flags]() -> int {
            const job::JobOptions options = job_options("run", j);
            const double timeout_s = options.timeout_s;
            if (sub->count("--algo") == 0) j.collective.algo = "all";
            const RunFlags& f = *run_flags;
            RunPlan plan{f, to_options(j.collective, Collective::kAllreduce, timeout_s),
                         to_options(j.p2p, timeout_s)};
            if (!f.skip_alltoall) plan.exchanges = exchange_suite(plan.allreduce);
            const bool table = j.common.format == "table" && !j.common.quiet;
            return job::run_job(
                options, [&](job::JobContext& ctx) { return run_body(ctx, plan); },
                job::JobTransport::kUcx,
                [&](const std::filesystem::path& results) { analyse_run(results, f, table); });
          }};
}

// One subcommand per collective (its descriptor), with nccl-tests' names as aliases.
Command add_collective_command(CLI::App& app, JobFlags& j,
                               const collectives::CollectiveDescriptor& cc) {
  auto* sub = app.add_subcommand(std::string(cc.name), std::string(cc.summary));
  for (std::string_view alias : cc.aliases) sub->alias(std::string(alias));
  add_common_flags(*sub, j.common);
  add_rail_flags(*sub, j.common);
  add_collective_flags(*sub, j.collective, cc.id);
  return {sub, [sub, &j, &cc]() -> int {
            // The shared -A default ("ring") is not every collective's: its first algorithm.
            if (sub->count("--algo") == 0) {
              j.collective.algo = std::string(collectives::algorithms_for(cc.id).front().name);
            }
            const job::JobOptions options = job_options(std::string(cc.name), j);
            const auto o = to_options(j.collective, cc.id, options.timeout_s);
            return job::run_job(options, [&](job::JobContext& ctx) {
              if (ctx.results) ctx.results->collectives.params = params_of(o);
              return collective_body(ctx, o);
            });
          }};
}

Command add_p2p_command(CLI::App& app, JobFlags& j) {
  auto* sub =
      app.add_subcommand("p2p", "Point-to-point latency and bandwidth over UCX between rank pairs");
  add_common_flags(*sub, j.common);
  add_rail_flags(*sub, j.common);
  add_p2p_flags(*sub, j.p2p, "");
  return {sub, [&j]() -> int {
            const job::JobOptions options = job_options("p2p", j);
            const auto o = to_options(j.p2p, options.timeout_s);
            return job::run_job(options, [&](job::JobContext& ctx) {
              if (ctx.results) ctx.results->p2p.params = params_of(o);
              return p2p_body(ctx, o);
            });
          }};
}

Command add_soak_command(CLI::App& app, JobFlags& j) {
  auto flags = std::make_shared<SoakFlags>();
  auto* sub = app.add_subcommand(
      "soak",
      "All-reduce again and again for --duration, every iteration verified: per window "
      "p50/p99 time, busbw, #wrong and every rank's RSS; at the end drift, RSS growth "
      "and a PASS/FAIL verdict (docs/soak.md)");
  add_common_flags(*sub, j.common);
  add_rail_flags(*sub, j.common);
  add_soak_flags(*sub, *flags);
  return {sub, [&j, flags]() -> int {
            const job::JobOptions options = job_options("soak", j);
            const auto o = to_options(*flags, options.timeout_s);
            return job::run_job(options, [&](job::JobContext& ctx) { return soak_body(ctx, o); });
          }};
}

Command add_validate_command(CLI::App& app, JobFlags&) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand("validate", "Check results files against the schema");
  sub->add_option("files", *files, "Results files")->required()->check(CLI::ExistingFile);
  return {sub, [files]() -> int { return validate_files(*files); }};
}

Command add_recover_command(CLI::App& app, JobFlags&) {
  auto checkpoint = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  auto* sub = app.add_subcommand(
      "recover",
      "Turn the checkpoint a killed or crashed rank 0 left (<name>.json.partial) into a "
      "results file marked incomplete (<name>.json), beside it or in --out; refuses the "
      "checkpoint of a run that is still going");
  sub->add_option("checkpoint", *checkpoint, "The checkpoint file (ibscope-...json.partial)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--out", *out_dir, "Folder for the results file (default: the checkpoint's)");
  return {sub, [checkpoint, out_dir]() -> int {
            const results::Recovered r = results::recover(*checkpoint, *out_dir);
            fmt::print("{}: {} rows recovered (incomplete run)\n# results: {}\n", *checkpoint,
                       r.rows, r.path.string());
            history::record_file(r.path, {});  // into ibscope.db beside it, best effort
            return 0;
          }};
}

Command add_algorithms_command(CLI::App& app, JobFlags&) {
  return {app.add_subcommand("algorithms", "List the collective algorithms"), list_algorithms};
}

Command add_topo_command(CLI::App& app, JobFlags& j) {
  auto* sub = app.add_subcommand(
      "topo",
      "Topology of every host in the job: NUMA nodes and CPUs, RDMA NICs (ports, rates, "
      "MTU, GIDs, PCIe path), GPUs and GPU<->NIC distance classes");
  add_common_flags(*sub, j.common);
  return {sub, [&j]() -> int {
            // A bad --timeout is a usage error before any rank starts.
            return job::run_job(job_options("topo", j), topo_body,
                                job::JobTransport::kBootstrapOnly);
          }};
}

Command add_probe_command(CLI::App& app, JobFlags& j) {
  auto flags = std::make_shared<ProbeFlags>();
  auto* sub = app.add_subcommand(
      "probe",
      "libibverbs probes between rank pairs, as perftest measures them (RC write/read/"
      "send, bandwidth and latency); --pairs all runs every pair in disjoint rounds");
  add_common_flags(*sub, j.common, /*short_quiet=*/false);
  add_probe_flags(*sub, *flags);
  return {sub, [&j, flags]() -> int {
            const job::JobOptions options = job_options("probe", j);
            // Usage errors before any rank starts; --pairs is checked against the job size later.
            if (flags->test == kLoopbackProbe) {
              to_loopback_options(*flags, options.timeout_s);
            } else {
              to_options(*flags, kMaxRanksForValidation, options.timeout_s);
            }
            return job::run_job(
                options, [&](job::JobContext& ctx) { return probe_body(ctx, *flags); },
                job::JobTransport::kBootstrapOnly);
          }};
}

Command add_accept_command(CLI::App& app, JobFlags& j) {
  auto flags = std::make_shared<AcceptFlags>();
  auto* sub = app.add_subcommand(
      "accept",
      "Acceptance of a fabric: topology/link-state preflight, all-pairs latency and "
      "bandwidth in disjoint rounds (verbs or UCX), verdicts per link, NIC and host "
      "against the line rate and the other links, an all-reduce sweep naming "
      "stragglers. Exit 0 pass, 1 fail, 2 usage");
  add_common_flags(*sub, j.common);
  add_accept_flags(*sub, *flags);
  return {sub, [&j, flags]() -> int {
            job::JobOptions options = job_options("accept", j);
            auto o = to_options(*flags, options.timeout_s);
            if (flags->baseline == "db") {  // the history this run is indexed into
              o.baseline_db = j.common.db.empty() ? std::filesystem::path(j.common.out_dir) /
                                                        history::kDefaultDbName
                                                  : std::filesystem::path(j.common.db);
            }
            options.nic = flags->device;  // one -d and --no-bind for probes and UCX rails
            options.bind = !flags->no_bind;
            return job::run_job(options, [&](job::JobContext& ctx) { return accept_body(ctx, o); });
          }};
}

// Every subcommand, in --help order, registered one way: it adds itself and its flags to the
// CLI and returns what to run when it is the one chosen. The offline ones need no JobFlags.
using AddCommand = Command (*)(CLI::App&, JobFlags&);
template <Command (*Add)(CLI::App&)>
Command offline(CLI::App& app, JobFlags&) {
  return Add(app);
}

std::vector<Command> add_commands(CLI::App& app, JobFlags& j) {
  std::vector<Command> commands;
  commands.push_back(add_run_command(app, j));
  for (const auto& cc : collectives::descriptors()) {
    commands.push_back(add_collective_command(app, j, cc));
  }
  constexpr AddCommand kCommands[] = {add_p2p_command,
                                      add_soak_command,
                                      add_validate_command,
                                      add_recover_command,
                                      add_algorithms_command,
                                      add_topo_command,
                                      add_probe_command,
                                      add_accept_command,
                                      offline<add_fit_command>,
                                      offline<add_predict_command>,
                                      offline<add_model_command>,
                                      offline<add_report_command>,
                                      offline<add_compare_command>,
                                      offline<add_history_command>,
                                      offline<add_export_prometheus_command>,
                                      offline<add_baseline_command>,
                                      offline<add_watch_command>,
                                      offline<add_man_command>};
  for (AddCommand add : kCommands) commands.push_back(add(app, j));
  return commands;
}

}  // namespace

int run(int argc, char** argv) {
  log::set_level_from_env();
  // Before anything opens a descriptor: rank 0's store holds one per rank and the launcher two
  // pipes per rank, past a 1024 soft limit from about 1,000 ranks on (issue 35).
  raise_fd_limit();
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
      "  ibscope compare before.json after.json  # regressions beyond the noise, exit 1\n"
      "  ibscope history --collective allreduce --size 1M  # one row's busbw over past runs\n"
      "  ibscope model --preset llama3-70b --inter-bw-gbps 48 --inter-links 8 --intra-bw-gbps 450\n"
      "  ibscope soak --np 4 --duration 8h   # verified all-reduce for hours: drift, RSS, #wrong\n"
      "  ibscope validate results/*.json\n"
      "  ibscope recover results/ibscope-allreduce-...json.partial  # what a killed rank 0 kept\n"
      "Exit status: 0 success, 1 measurement failed (#wrong, lost peer, deadline), 2 usage.");

  JobFlags job_flags;
  job_flags.argv.assign(argv, argv + argc);
  const std::vector<Command> commands = add_commands(app, job_flags);
  add_help_footers(app);  // examples and exit status of every subcommand (after they exist)

  try {
    check_command_name(app, argc, argv);
  } catch (const UsageError& e) {
    log::error("{}", e.what());
    return 2;
  }
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

  try {
    for (const auto& command : commands) {
      if (*command.app) return command.run();
    }
  } catch (const Error& e) {
    log::error("{}", e.what());
    return exit_status(e.kind());
  }
  return 2;
}

}  // namespace ibscope::cli
