#include "ibscope/job/job.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "ibscope/bootstrap/launch_env.hpp"
#include "ibscope/bootstrap/local_launcher.hpp"
#include "ibscope/build_info.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/collectives/harness/soak_run.hpp"
#include "ibscope/core/closed_stdout.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/core/interrupt.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/rank_ranges.hpp"
#include "ibscope/job/crash_hook.hpp"
#include "ibscope/measure/rail_setup.hpp"
#include "ibscope/output/console.hpp"
#include "ibscope/output/progress_line.hpp"
#include "ibscope/output/results_csv.hpp"
#include "ibscope/probes/slow_nic_hook.hpp"
#include "ibscope/results/writer.hpp"
#include "ibscope/topo/cpu.hpp"
#include "ibscope/transport/transports.hpp"
#include "ibscope/transport/verbs/library_version.hpp"

namespace ibscope::job {
namespace {

std::string join_lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

std::vector<std::string> split_lines(const bootstrap::Bytes& b) {
  std::vector<std::string> out;
  std::string cur;
  for (std::byte c : b) {
    if (c == std::byte{'\n'}) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bootstrap::Bytes as_bytes(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return bootstrap::Bytes(p, p + s.size());
}

std::string build_description() {
  std::string b = build::kBuildType;
  if (build::kSanitized) b += "+asan/ubsan";
  return b;
}

// Every fault hook's value parsed as its flag would be, and its rank a rank of the job's
// `job_ranks` (docs/fault-hooks.md): a malformed hook is a usage error before anything runs.
void check_fault_hooks(int job_ranks) {
  collectives::check_collective_fault_hooks(job_ranks);
  if (const auto crash = crash_hook_from_env()) {
    check_hook_rank(kCrashHookVariable, std::getenv(std::string(kCrashHookVariable).c_str()),
                    crash->rank, job_ranks);
  }
  (void)collectives::soak_leak_bytes_per_s_from_env();
  (void)DiskFullHook::from_env();
  (void)probes::slow_nic_delay_us("");  // parses IBSCOPE_FAULT_SLOW_NIC
}

// Every rank's fault hooks (core/fault_hooks.hpp), on every rank: a hook set on one rank
// only (a launcher that forwards the environment to some hosts) forges the job all the same.
std::vector<FaultHook> gather_fault_hooks(bootstrap::Bootstrap& boot) {
  std::vector<std::string> mine;
  for (const auto& [name, value] : fault_hooks_in(process_env_with_prefix("IBSCOPE_"))) {
    // One line per variable: a newline, a tab or a backslash in a value travels escaped.
    mine.push_back(name + "=" + escape_hook_value(value));
  }
  // Gathered on rank 0, merged there and broadcast: O(n) bytes at the root, not O(n^2).
  const auto all = boot.gather(as_bytes(join_lines(mine)), "fault hooks");
  std::vector<EnvVars> per_rank;
  for (const auto& bytes : all) {
    EnvVars hooks;
    for (const auto& line : split_lines(bytes)) {
      const auto eq = line.find('=');
      if (eq != std::string::npos)
        hooks[line.substr(0, eq)] = unescape_hook_value(line.substr(eq + 1));
    }
    per_rank.push_back(std::move(hooks));
  }
  // One line per hook: name, value and its ranks as ranges ("0-7 9"), tab-separated.
  std::vector<std::string> merged;
  if (boot.rank() == 0) {
    for (const auto& h : merge_fault_hooks(per_rank)) {
      merged.push_back(fmt::format("{}\t{}\t{}", h.name, escape_hook_value(h.value),
                                   format_rank_ranges(h.ranks)));
    }
  }
  std::vector<FaultHook> hooks;
  for (const auto& line :
       split_lines(boot.broadcast(as_bytes(join_lines(merged)), "fault hooks"))) {
    const auto tab1 = line.find('\t');
    const auto tab2 = line.find('\t', tab1 + 1);
    if (tab1 == std::string::npos || tab2 == std::string::npos) continue;
    hooks.push_back(FaultHook{line.substr(0, tab1),
                              unescape_hook_value(line.substr(tab1 + 1, tab2 - tab1 - 1)),
                              parse_rank_ranges(std::string_view(line).substr(tab2 + 1))});
  }
  return hooks;
}

/// Gathers what describes the job (on every rank; collective) and fills the banner/results.
/// Returns the fault hooks set on any rank (the same on every rank).
std::vector<FaultHook> describe_job(bootstrap::Bootstrap& boot, transport::Comm* comm,
                                    results::Document* doc, output::BannerInfo& banner,
                                    const measure::RailSetup* rail, const EnvVars& user_ucx_env) {
  const topo::CpuInfo cpu = topo::read_cpu_info();
  std::vector<std::string> mine;
  mine.push_back(std::to_string(cpu.allowed_threads));
  // The transports to the ring neighbours (each rank connects only the peers it talks to, so
  // these stand for the job's paths: within a host, and across hosts where the ring crosses).
  std::vector<int> neighbours;
  if (comm != nullptr && comm->size() > 1) {
    neighbours.push_back((comm->rank() + 1) % comm->size());
    if (comm->size() > 2) neighbours.push_back((comm->rank() + comm->size() - 1) % comm->size());
    comm->connect(neighbours);
    for (const int r : neighbours) mine.push_back(fmt::format("{} {}", r, comm->transports(r)));
  }
  const auto all = boot.gather(as_bytes(join_lines(mine)), "job description");
  const std::vector<FaultHook> hooks = gather_fault_hooks(boot);
  std::optional<measure::JobRails> rails;
  if (comm != nullptr && rail != nullptr) {
    std::vector<std::string> lanes;
    for (const int r : neighbours) {
      for (auto& d : comm->devices_to(r)) {
        if (std::find(lanes.begin(), lanes.end(), d) == lanes.end()) lanes.push_back(d);
      }
    }
    rails = measure::gather_rails(boot, *rail, lanes);
    std::vector<std::string> details;
    for (const auto& r : rails->ranks) details.push_back(r.nic.empty() ? "" : "nic " + r.nic);
    // Rank 0 knows every rank's NIC; the others know theirs and learn their peers'
    // (publish_detail, learn_hosts).
    if (boot.rank() == 0) boot.set_rank_details(std::move(details));  // stalls name the NICs
  }

  banner.ranks = boot.size();
  banner.bootstrap = std::string(boot.kind());
  banner.hosts = boot.hosts();
  if (comm != nullptr) banner.ucx_version = comm->library_version();
  banner.build = build_description();

  std::map<std::string, std::string> transports;
  std::set<std::string> distinct;
  std::map<std::string, int> threads_per_host;
  for (std::size_t r = 0; r < all.size(); ++r) {  // rank 0 only: the others got nothing
    const auto lines = split_lines(all[r]);
    if (!lines.empty())
      threads_per_host[boot.host(static_cast<int>(r))] = std::atoi(lines[0].c_str());
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const auto space = lines[i].find(' ');
      if (space == std::string::npos) continue;
      const std::string t = lines[i].substr(space + 1);
      transports[fmt::format("{}->{}", r, lines[i].substr(0, space))] = t;
      distinct.insert(t);
    }
  }
  for (const auto& t : distinct) banner.transports.push_back(t);
  // First, so that no other warning pushes them out of sight.
  for (const auto& h : hooks) banner.warnings.push_back(fault_hook_warning(h, boot.size()));
  if (rails) {
    for (const auto& r : rails->ranks) {
      banner.rank_rails.push_back(
          r.nic.empty() ? std::string()
                        : fmt::format("nic {}  {}", r.nic,
                                      r.numa_node >= 0 ? fmt::format("NUMA {} (bound)", r.numa_node)
                                                       : r.binding));
    }
    banner.ucx_notes = rails->notes;
    for (const auto& w : rails->warnings) banner.warnings.push_back(w);
  }

  for (const auto& [host, threads] : threads_per_host) {  // rank 0 only, which knows every host
    int ranks_here = 0;
    for (const auto& h : boot.hosts()) ranks_here += h == host ? 1 : 0;
    if (threads > 0 && ranks_here > threads) {
      banner.warnings.push_back(fmt::format(
          "{} ranks on {} which has {} usable CPU threads: the ranks oversubscribe the CPUs "
          "(they yield when idle) and times, small messages above all, are inflated",
          ranks_here, host, threads));
    }
  }
  if (std::string_view(build::kBuildType) == "Debug" || build::kSanitized) {
    banner.warnings.push_back(
        fmt::format("this is a {} build: figures are not representative", build_description()));
  }
  if (doc == nullptr) return hooks;
  doc->job = results::Job{.ranks = boot.size(),
                          .bootstrap = std::string(boot.kind()),
                          .hosts = boot.hosts(),
                          .threads_per_host = threads_per_host};
  auto& env = doc->environment;
  if (comm != nullptr) env.ucx_version = banner.ucx_version;
  env.ibverbs_version = verbs::loaded_library_version();
  env.build = banner.build;
  if (comm != nullptr) env.transports = transports;
  env.ucx_env = user_ucx_env;
  if (rail != nullptr && !rail->env.set.empty()) env.ucx_env_set = rail->env.set;
  if (rails) env.rails = rails->ranks;
  env.ibscope_env = recorded_ibscope_env(process_env_with_prefix("IBSCOPE_"));
  for (const auto& w : banner.warnings) doc->add_warning(w);
  return hooks;
}

void print_results_path(const std::string& line, bool table) {
  std::fflush(stdout);  // a reader of the table that went away (`| head`) shows by now
  if (table && !stdout_closed()) {
    fmt::print("{}\n", line);
    std::fflush(stdout);
  } else {
    fmt::print(stderr, "{}\n", line);
  }
}

}  // namespace

transport::Comm& JobContext::comm() const {
  if (comm_ptr == nullptr) throw std::logic_error("this job did not connect UCX");
  return *comm_ptr;
}

std::string JobContext::nic() const {
  return rail != nullptr && rail->rail ? rail->rail->device_port() : std::string();
}

void JobContext::rows_recorded() {
  ++batches_recorded;
  if (disk_full_hook) disk_full_hook->at_batch(batches_recorded);
  if (results != nullptr && results_file != nullptr) {
    // Tried after every batch, also after a failure: space can come back (a full disk that
    // someone cleans up), and a crash of rank 0 then loses only the batch in progress again.
    try {
      results_file->checkpoint(*results);
      if (checkpoint_failing_since > 0) {
        log::info(
            "the checkpoint {} is up to date again after batch {} (its update had failed since "
            "batch {}): it holds the {} rows measured so far",
            results_file->checkpoint_path().string(), batches_recorded, checkpoint_failing_since,
            results::measured_rows(*results));
        checkpoint_failing_since = 0;
      }
    } catch (const SystemError& e) {
      // The run goes on: its results file is written at the end as always. Warned once, not
      // after every batch while the disk stays full.
      if (checkpoint_failing_since == 0) {
        checkpoint_failing_since = batches_recorded;
        log::warn(
            "cannot update the checkpoint after batch {} ({}): it keeps the rows of the batches "
            "before, and a crash of rank 0 would lose the ones since; it is tried again after "
            "every batch",
            batches_recorded, e.what());
      }
    }
  }
  // Ranks other than 0 do not wait for rank 0 to take their rows (gathers do not block them), so
  // a crash hook's rank would die a batch early. When the hook is set (on any rank: fault_hooks is
  // the same list everywhere, so every rank takes this barrier or none does), every rank waits
  // here until rank 0 has checkpointed the batch: the crash then comes at a known row.
  const bool crash_hook_in_job =
      std::any_of(fault_hooks.begin(), fault_hooks.end(),
                  [](const FaultHook& h) { return h.name == kCrashHookVariable; });
  if (crash_hook_in_job) bootstrap.barrier("crash hook: batch recorded");
  if (crash_hook && crash_hook->rank == bootstrap.rank() &&
      crash_hook->after_batches == batches_recorded) {
    crash_now(*crash_hook);
  }
}

int run_job(const JobOptions& options, const JobBody& body, JobTransport transport,
            const AfterWrite& after_write) {
  const std::string& subcommand = options.command;
  std::unique_ptr<bootstrap::Bootstrap> boot;
  std::unique_ptr<results::Document> doc;
  std::optional<measure::RailSetup> rail;
  std::optional<results::ResultsFile> results_file;
  // Outside the try block: an error's line and the results are written before the endpoints
  // are force-closed, which can abort inside UCX (ud_verbs on Soft-RoCE, UCX 1.13).
  std::unique_ptr<transport::Comm> comm;
  const bool table = options.format == OutputFormat::kTable && !options.quiet;
  try {
    // First, for the launcher and a rank alike: a reader of standard output that goes away
    // (`| head`) must neither kill the run (SIGPIPE) nor stop it (EPIPE).
    tolerate_closed_stdout();
    const double timeout_s = options.timeout_s;
    const bootstrap::LaunchEnv env = bootstrap::detect_launch_from_process_env();
    if (env.kind == bootstrap::LaunchKind::kLocal && options.np > 1) {
      check_fault_hooks(options.np);  // before any rank starts
      return bootstrap::run_local_launcher(
          bootstrap::LocalLaunchOptions{options.np, timeout_s, options.argv, options.stop_on_usr1});
    }
    // A rank: SIGINT/SIGTERM/SIGHUP stop the job at the next wait, and rank 0 writes the rows
    // so far (the local launcher above forwards signals to its ranks instead). The launcher's
    // ranks start with these signals blocked; this unblocks them, so nothing that may take long
    // comes before it.
    install_interrupt_handlers(options.stop_on_usr1);
    if (env.kind == bootstrap::LaunchKind::kTcp)
      log::set_identity(env.rank, bootstrap::local_hostname());
    boot = env.kind == bootstrap::LaunchKind::kLocal ? bootstrap::make_single_bootstrap(timeout_s)
                                                     : bootstrap::connect_bootstrap(env, timeout_s);
    const EnvVars user_ucx_env = process_env_with_prefix("UCX_");
    set_interrupt_identity(boot->describe(boot->rank()));
    check_fault_hooks(boot->size());
    if (transport == JobTransport::kUcx) {
      rail = measure::set_up_rail(*boot, measure::RailRequest{options.nic, options.bind});
      // Every rank's own NIC, for the messages of the peers that talk to it (the Comm's barrier
      // makes it visible).
      boot->publish_detail(rail->rail ? "nic " + rail->rail->device_port() : std::string());
      comm = transport::data_transport().create(*boot);
    }
    transport::Comm* comm_ptr = comm.get();
    if (boot->rank() == 0) {
      doc = std::make_unique<results::Document>(results::Document::start(subcommand, options.argv));
      doc->keep_rank_samples = options.keep_samples;
      results_file = results::ResultsFile::reserve(*doc, options.out_dir);
      try {
        // Held until the results file is written: `recover` refuses the checkpoint meanwhile.
        results_file->lock(fmt::format("pid {} on {}", ::getpid(), bootstrap::local_hostname()));
      } catch (const SystemError& e) {
        log::warn(
            "{}: `ibscope recover` cannot tell that this run is alive, so do not recover its "
            "checkpoint before the run has ended",
            e.what());
      }
    }
    output::BannerInfo banner;
    banner.command = subcommand;
    std::vector<FaultHook> hooks =
        describe_job(*boot, comm_ptr, doc.get(), banner, rail ? &*rail : nullptr, user_ucx_env);
    if (boot->rank() == 0 && table) output::print_banner(stdout, banner);
    if (boot->rank() == 0 && !table) {
      for (const auto& w : banner.warnings) log::warn("{}", w);
    }

    JobContext ctx{
        *boot,
        comm_ptr,
        rail ? &*rail : nullptr,
        doc.get(),
        boot->rank() == 0 && table ? stdout : nullptr,
        timeout_s,
        boot->rank() == 0 && !options.quiet && output::ProgressLine::stderr_is_terminal(),
        std::move(hooks)};
    ctx.nic_counters = options.nic_counters;
    ctx.crash_hook = crash_hook_from_env();
    ctx.disk_full_hook = DiskFullHook::from_env();
    if (results_file) {
      ctx.results_file = &*results_file;
      // Before any row: a rank 0 that dies now still leaves the job's description.
      results_file->checkpoint(*doc);
    }
    int status = body(ctx);
    if (comm) comm->close();
    if (doc) {
      std::filesystem::path path;
      try {
        path = results_file->write(*doc);
      } catch (const SystemError& e) {
        // The message names the file, the reason and where the rows are now (the checkpoint,
        // updated to say so when it could be). Not written again as a failed run below: the
        // folder that refused the file would refuse that one too.
        log::error("{}", e.what());
        status = exit_status(ErrorKind::kSystem);
      }
      if (!path.empty()) {
        if (options.format == OutputFormat::kJson) fmt::print("{}", results::to_text(*doc));
        if (options.format == OutputFormat::kCsv) {
          fmt::print("{}", output::results_csv(*doc));
          std::fflush(stdout);
          const auto csv = output::write_results_csv(*doc, path);
          print_results_path(fmt::format("# csv: {}", csv.string()), table);
        }
        print_results_path(fmt::format("# results: {}", path.string()), table);
        // Best effort, after the file is on disk: a failure is one warning, never the run's.
        history::record_run(path, *doc, options.history);
        if (after_write) after_write(path);
      }
    }
    // Again at the end, on stderr, where a long run's banner has scrolled away.
    if (boot->rank() == 0) {
      for (const auto& h : ctx.fault_hooks) log::warn("{}", fault_hook_warning(h, boot->size()));
    }
    return status;
  } catch (const Error& e) {
    std::string message = e.what();
    // A scheduler signals every task at once (scancel, a time limit): a peer that acted on its
    // signal first looks lost to this rank, whose own signal is the cause of the stop.
    const auto* interrupted = dynamic_cast<const InterruptedError*>(&e);
    const int sig = interrupted != nullptr ? interrupted->signal() : interrupt_signal();
    const ErrorKind kind = sig != 0 ? ErrorKind::kInterrupted : e.kind();
    if (sig != 0 && interrupted == nullptr) {
      message = fmt::format("interrupted by {} ({})", signal_name(sig), message);
    }
    if (rail) {
      // A stall or peer failure whose cause is this rank's own link: say so on its line.
      if (const auto link = measure::rail_link_problem(*rail)) message += "; " + *link;
    }
    if (boot && boot->rank() == 1 && dynamic_cast<const bootstrap::RootLostError*>(&e)) {
      // One line for the job (not one per rank): where rank 0's rows are now.
      message += fmt::format(
          "; what rank 0 measured is in its checkpoint {}/ibscope-{}-*.json.partial on {} "
          "(`ibscope recover` makes a results file of it)",
          options.out_dir, subcommand, boot->hosts().at(0));
    }
    log::error("{}", message);
    // Rank 0 writes before it tells the job to stop: under PMIx the abort has the launcher
    // (mpirun, srun) kill every rank, rank 0 included.
    if (doc) {
      try {
        doc->fail(std::string(to_string(kind)), message);
        const auto path =
            results_file ? results_file->write(*doc) : results::write(*doc, options.out_dir);
        print_results_path(fmt::format("# partial results (incomplete): {}", path.string()), table);
        history::record_run(path, *doc, options.history);
      } catch (const std::exception& w) {
        log::error("could not write partial results: {}", w.what());
      }
    }
    if (boot) boot->abort_job(message);
    comm.reset();
    if (sig != 0) return 128 + sig;
    return exit_status(kind);
  } catch (const std::exception& e) {
    log::error("internal error: {}", e.what());
    if (boot) boot->abort_job(e.what());
    return 1;
  }
}

}  // namespace ibscope::job
