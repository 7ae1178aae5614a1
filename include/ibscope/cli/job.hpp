#pragma once
/// The life of one measurement job, shared by every subcommand: choose the launch (local
/// launcher, TCP store, PMIx), bootstrap, connect UCX, describe the job (banner and results
/// environment), run the body, write the results file (also when the body fails, marked
/// incomplete) and map errors to exit statuses.

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/cli/crash_hook.hpp"
#include "ibscope/cli/disk_full_hook.hpp"
#include "ibscope/cli/flags.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/results/document.hpp"
#include "ibscope/results/results_file.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::cli {

/// What a job connects before its body runs: UCX endpoints to every rank (collectives, p2p),
/// or nothing beyond the bootstrap (verbs probes and topology bring up their own transport).
enum class JobTransport { kUcx, kBootstrapOnly };

struct JobContext {
  bootstrap::Bootstrap& bootstrap;
  transport::Comm* comm_ptr;   ///< nullptr for JobTransport::kBootstrapOnly
  results::Document* results;  ///< rank 0 only; nullptr elsewhere
  std::FILE* table_out;        ///< where tables go; nullptr when not printing tables
  double timeout_s;
  /// Draw a progress line on stderr (rank 0, stderr a terminal, not --quiet).
  bool show_progress = false;
  /// The test fault hooks set on any rank (core/fault_hooks.hpp), the same list on every rank;
  /// the banner and the results' warnings already name them.
  std::vector<FaultHook> fault_hooks;

  /// Rank 0's results file and checkpoint (results/results_file.hpp); nullptr elsewhere.
  results::ResultsFile* results_file = nullptr;
  /// IBSCOPE_FAULT_CRASH_RANK (cli/crash_hook.hpp), when set.
  std::optional<CrashHook> crash_hook = std::nullopt;
  /// IBSCOPE_FAULT_DISK_FULL (cli/disk_full_hook.hpp), when set.
  std::unique_ptr<DiskFullHook> disk_full_hook = nullptr;

  /// The UCX communicator; only for jobs started with JobTransport::kUcx.
  transport::Comm& comm() const;
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

/// Runs `body` on every rank. `argv` is the full command line (re-executed by the local
/// launcher). Never throws: errors are printed as one line and become exit statuses.
int run_job(const std::string& subcommand, const CommonFlags& common,
            const std::vector<std::string>& argv, const JobBody& body,
            JobTransport transport = JobTransport::kUcx, const AfterWrite& after_write = {});

}  // namespace ibscope::cli
