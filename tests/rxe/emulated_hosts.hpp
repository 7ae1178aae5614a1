#pragma once
// For rxe tests: one ibscope job as H emulated hosts x P ranks in the Soft-RoCE guest, through
// emulated_hosts.sh (own hostname, IPC namespace, /dev/shm and boot id per host, so UCX talks
// between them over rxe as between real hosts), and what the ranks left in their logs.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mp/process.hpp"

namespace ibscope::test::rxe {

/// What one emulated_hosts.sh run left: the script's own result, each rank's stdout, stderr
/// and exit status (-1: none recorded).
struct HostsRun {
  ProcessResult script;
  std::vector<std::string> out, err;
  std::vector<int> rc;
  /// Everything above, for INFO().
  std::string describe() const;
};

/// `text` split at spaces: a command line's arguments ("p2p -b 64K" -> {"p2p", "-b", "64K"}).
std::vector<std::string> words(const std::string& text);

/// The whole file at `p` ("" when it cannot be read).
std::string slurp(const std::filesystem::path& p);

/// emulated_hosts.sh running ibscope `args` as `hosts` emulated hosts x `per` ranks each, rank
/// logs under `logs` (emptied first), results in `out`; `host_args`: '|' between hosts. Each
/// call gets a TCP store port of its own.
ProcessSpec hosts_spec(const std::filesystem::path& logs, int hosts, int per,
                       std::vector<std::string> args, const std::string& host_args,
                       const std::string& out = "/tmp/ibscope-rxe-results");

/// Each rank's stdout, stderr and exit status from the logs of a finished run.
HostsRun collect_ranks(ProcessResult script, const std::filesystem::path& logs, int ranks);

/// ibscope `args` as `hosts` emulated hosts x `per` ranks each; `host_args`: '|' between hosts.
HostsRun run_hosts(int hosts, int per, std::vector<std::string> args,
                   const std::string& host_args = "");

/// The checks every UCX job between the emulated hosts must pass (exit 0, complete, no UCX
/// variable set by the test and ibscope's Soft-RoCE set chosen, `ranks` rails, every pair's
/// lanes over rc_verbs and none over ud_verbs, every "wrong" count 0); returns rank 0's document.
nlohmann::json check_rdma_job(const HostsRun& r, std::size_t ranks);

}  // namespace ibscope::test::rxe
