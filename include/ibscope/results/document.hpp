#pragma once
/// The results file as types: one Document per run. Every writer (the jobs in cli/, accept,
/// soak, the sweeps) fills it and every reader (report, fit, predict, model, export-prometheus,
/// validate) consumes it; its JSON form belongs to src/results/ alone. results/README.md
/// documents each field; results/schema/ is the single source of truth for the file
/// (results/loader.hpp checks every file against it before building a Document).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/measure/records.hpp"
#include "ibscope/results/acceptance.hpp"
#include "ibscope/results/loopback.hpp"
#include "ibscope/results/params.hpp"
#include "ibscope/results/rank_samples.hpp"
#include "ibscope/results/schema.hpp"
#include "ibscope/results/soak.hpp"
#include "ibscope/topo/host_topology.hpp"

namespace ibscope::results {

/// The build that wrote the file.
struct Tool {
  std::string name = "ibscope";
  std::string version, git_sha, build_type;
};

/// What was run: the subcommand ("run", "allreduce", "p2p", ...) and argv as given.
struct Command {
  std::string subcommand;
  std::vector<std::string> argv;
};

/// Why a run did not complete (Error::kind's name and its message).
struct RunError {
  std::string kind, message;
};

/// The job: how many ranks, how they were started, and where they ran.
struct Job {
  int ranks = 0;
  std::string bootstrap;           ///< "local", "tcp", "pmix", "single"
  std::vector<std::string> hosts;  ///< per rank
  std::map<std::string, int> threads_per_host;
};

/// One rank's RDMA port as the verbs probes brought it up (probes/probe_runner.hpp RankPort).
struct VerbsPort {
  int rank = 0;
  std::string device, link_layer;
  double data_rate_gbit = 0;
  int gid_index = -1;
  std::string gid;
  std::uint32_t active_mtu_bytes = 0;
  std::string binding, mem_initiator, mem_responder, registration;
  std::string gpu;
  int cuda_device = -1;
  std::string gpu_name, gpu_nic_path, gpu_choice;
  std::vector<std::string> gpu_warnings;
};

/// One rank's rail for UCX jobs (measure/rail_setup.hpp): its NIC, what UCX really used, and
/// where the rank is bound.
struct RankRail {
  int rank = 0;
  std::string host;
  std::string nic;                     ///< "mlx5_3:1"; "" when the host has no ACTIVE RDMA port
  std::string netdev;                  ///< the NIC's interface, "" when unknown
  std::string reason;                  ///< why this NIC ("" without one)
  std::vector<std::string> lane_nics;  ///< RDMA devices of this rank's UCX lanes ("rxe0:1")
  int numa_node = -1;                  ///< the node the rank is bound to (-1: not bound)
  std::string cpus;                    ///< that node's CPUs ("" when not bound)
  std::string binding;                 ///< one line: bound, or why not
  bool operator==(const RankRail&) const = default;
};

/// The software environment: UCX, the build, the transports UCX chose, the UCX_* and IBSCOPE_*
/// variables (rank 0's).
struct Environment {
  std::optional<std::string> ucx_version;  ///< jobs that connected UCX
  /// The libibverbs loaded in rank 0 (verbs/library_version.hpp); empty in files from before
  /// 2026-12-07 or where it could not be read.
  std::optional<std::string> ibverbs_version;
  std::string build;  ///< "Release", "Debug+asan/ubsan"
  /// "rank->peer" -> UCX's transport description; jobs that connected UCX.
  std::optional<std::map<std::string, std::string>> transports;
  std::map<std::string, std::string> ucx_env;  ///< the UCX_* variables the user set (rank 0)
  /// The UCX_* variables ibscope set on rank 0 because the user had not (env_plan.hpp).
  std::optional<std::map<std::string, std::string>> ucx_env_set;
  /// Every IBSCOPE_* variable, fault hooks included; a secret's value is not recorded. Empty
  /// optional: a file written before ibscope recorded them.
  std::optional<std::map<std::string, std::string>> ibscope_env;
  std::optional<std::vector<VerbsPort>> verbs_ports;  ///< probe runs
  std::optional<std::vector<RankRail>> rails;         ///< UCX jobs, one per rank
  /// Read from a file of a large job that grouped `transports` (n^2 pairs) by description; the
  /// writer groups them itself (rank_samples.hpp), so commands fill `transports` only.
  std::optional<std::vector<TransportClass>> transport_classes = {};
};

struct CollectiveSection {
  std::optional<CollectiveParams> params;  ///< empty: written as {} (no collective phase)
  std::vector<measure::CollectiveRow> rows;
};

struct P2pSection {
  std::optional<P2pParams> params;
  std::vector<measure::P2pRow> rows;
};

struct ProbeSection {
  std::optional<ProbeParams> params;
  std::vector<measure::ProbeRow> rows;
};

struct Document {
  int schema_version = kSupportedSchemaVersion;
  Tool tool;
  Command command;
  std::string started_utc;                  ///< "2026-12-02T13:45:07Z"
  std::optional<std::string> finished_utc;  ///< stamped when written
  bool complete = true;
  std::optional<RunError> error;
  Job job;
  Environment environment;
  std::vector<std::string> warnings;
  CollectiveSection collectives;
  P2pSection p2p;
  std::optional<ProbeSection> probes;                       ///< probe runs
  std::optional<std::vector<topo::HostTopology>> topology;  ///< one per host
  std::optional<collectives::TuningTable> tuning;           ///< sweeps of several algorithms
  std::optional<Acceptance> acceptance;                     ///< `ibscope accept`
  std::optional<Soak> soak;                                 ///< `ibscope soak`
  std::optional<Loopback> loopback;                         ///< `ibscope probe loopback`
  /// `--keep-samples`: write every per-rank sample whatever the job's size. Otherwise jobs of
  /// more than kRankSamplesKeptUpToRanks ranks get summaries (rank_samples.hpp). Not in the
  /// file: a reader sees which form each section has.
  bool keep_rank_samples = false;

  /// A document for `subcommand`, stamped with this build and the current UTC time.
  static Document start(std::string subcommand, std::vector<std::string> argv);
  /// Marks the run failed: complete = false, with the error's kind and message.
  void fail(std::string kind, std::string message);
  void add_row(const measure::CollectiveRow& row) { collectives.rows.push_back(row); }
  void add_row(const measure::P2pRow& row) { p2p.rows.push_back(row); }
  /// Creates the probes section on first use (files without probes omit it).
  void add_row(const measure::ProbeRow& row);
  void add_warning(std::string warning) { warnings.push_back(std::move(warning)); }
};

/// UTC timestamp "2026-12-02T13:45:07Z".
std::string utc_now_iso8601();

}  // namespace ibscope::results
