#pragma once
/// The job layer: the life of one measurement job, shared by every subcommand that runs one.
/// Choose the launch (local launcher, TCP store, PMIx), bootstrap, set up this rank's rail (NIC,
/// UCX variables, binding), connect UCX, describe the job (banner and results environment),
/// run the body with a JobContext, write the results file (also when the body fails, marked
/// incomplete) and map errors to exit statuses. cli/ parses the flags into JobOptions and a
/// body; nothing here reads argv's flags.

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/history/record.hpp"
#include "ibscope/job/crash_hook.hpp"
#include "ibscope/job/disk_full_hook.hpp"
#include "ibscope/measure/rail_setup.hpp"
#include "ibscope/results/document.hpp"
#include "ibscope/results/results_file.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::job {

/// What a job connects before its body runs: UCX endpoints to every rank (collectives, p2p),
/// or nothing beyond the bootstrap (verbs probes and topology bring up their own transport).
enum class JobTransport { kUcx, kBootstrapOnly };

/// What the console gets besides the results file (--format).
enum class OutputFormat { kTable, kJson, kCsv };

/// How to run a job: the common flags, parsed (cli/ makes them; every field has a flag).
struct JobOptions {
  std::string command;              ///< the subcommand, for the banner and the results file name
  std::vector<std::string> argv;    ///< the full command line (re-executed by the local launcher)
  int np = 2;                       ///< --np: ranks the local launcher starts (when not launched)
  double timeout_s = 60;            ///< --timeout: every wait's deadline
  std::string out_dir = "results";  ///< --out: the results folder
  OutputFormat format = OutputFormat::kTable;
  bool quiet = false;         ///< --quiet: no tables (and no progress line)
  std::string nic;            ///< --nic (accept: -d): each rank's UCX rail; "" = chosen
  bool bind = true;           ///< false: --no-bind (CPUs and memory left unbound)
  bool stop_on_usr1 = false;  ///< --stop-on-usr1: SIGUSR1 stops the run as SIGTERM does
  bool keep_samples = false;  ///< --keep-samples: every per-rank sample, whatever the job size
  bool nic_counters = true;   ///< false: --no-nic-counters
  history::HistoryOptions history;  ///< --db, --no-history: where the run is indexed
};

struct JobContext {
  bootstrap::Bootstrap& bootstrap;
  transport::Comm* comm_ptr;  ///< nullptr for JobTransport::kBootstrapOnly
  /// This rank's rail: its NIC (rail->rail, empty on a host without an ACTIVE RDMA port), the
  /// UCX variables set for it and the CPU binding. nullptr for JobTransport::kBootstrapOnly
  /// (verbs probes and topology choose their devices themselves).
  const measure::RailSetup* rail;
  results::Document* results;  ///< rank 0 only; nullptr elsewhere
  std::FILE* table_out;        ///< where tables go; nullptr when not printing tables
  double timeout_s;
  /// Draw a progress line on stderr (rank 0, stderr a terminal, not --quiet).
  bool show_progress = false;
  /// The test fault hooks set on any rank (core/fault_hooks.hpp), the same list on every rank;
  /// the banner and the results' warnings already name them.
  std::vector<FaultHook> fault_hooks;
  /// Read the NIC counters around each row (false: --no-nic-counters; docs/counters.md).
  bool nic_counters = true;

  /// Rank 0's results file and checkpoint (results/results_file.hpp); nullptr elsewhere.
  results::ResultsFile* results_file = nullptr;
  /// IBSCOPE_FAULT_CRASH_RANK (job/crash_hook.hpp), when set.
  std::optional<CrashHook> crash_hook = std::nullopt;
  /// IBSCOPE_FAULT_DISK_FULL (job/disk_full_hook.hpp), when set.
  std::unique_ptr<DiskFullHook> disk_full_hook = nullptr;

  /// The UCX communicator; only for jobs started with JobTransport::kUcx.
  transport::Comm& comm() const;
  /// This rank's NIC as "device:port" (its rail); "" when the job has no rail or the host no
  /// ACTIVE RDMA port.
  std::string nic() const;
  /// Every rank calls this after each batch of rows (a sweep's message size, a soak's window)
  /// that rank 0 added to `results`: rank 0 rewrites its checkpoint, so a crash loses at most
  /// the batch in progress; the crash hook fires here. A checkpoint that cannot be written (a
  /// full disk) is warned about once and tried again after every batch until it can (then
  /// rank 0 says so); the run goes on either way.
  void rows_recorded();

  // Kept by rows_recorded() (public only so that the context stays an aggregate).
  int batches_recorded = 0;
  /// The first batch whose checkpoint failed, while none has been written since; 0 otherwise.
  int checkpoint_failing_since = 0;
};

/// Returns the exit status the body wants (0, or 1 when a check failed).
using JobBody = std::function<int(JobContext&)>;

/// Called on rank 0 once a complete results file is written, with its path; must not throw.
using AfterWrite = std::function<void(const std::filesystem::path& results)>;

/// Runs `body` on every rank. Never throws: errors are printed as one line and become exit
/// statuses (core/error.hpp; 128+N for signal N).
int run_job(const JobOptions& options, const JobBody& body,
            JobTransport transport = JobTransport::kUcx, const AfterWrite& after_write = {});

}  // namespace ibscope::job
