#pragma once
/// A baseline: what a fabric measured over several past runs, per link and per collective row,
/// as robust statistics (median and spread of N runs), keyed by the hardware it ran on; or a
/// reference for a class of hardware from a public source (docs/baselines.md). Its own versioned
/// document type, checked against results/schema/ibscope-baseline-v1.schema.json (compiled in:
/// baseline_schema_text()) on every read and write; written atomically, never overwritten.
/// Rates in GB/s (1e9 B/s) unless the name says Gb/s.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/measure/robust_stats.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::results {

/// The baseline format this ibscope writes and reads ("baseline_version").
inline constexpr int kBaselineVersion = 1;

/// The baseline schema's JSON text, as in results/schema/ at build time. Never throws.
std::string_view baseline_schema_text();

/// What a run ran on, from its topology, job and acceptance sections. Two runs may share a
/// baseline only when their signatures are equal (unless --allow-mixed).
struct HardwareSignature {
  std::string nic_model;      ///< RDMA device kinds by driver ("mlx5", "rxe"), comma list; "" none
  std::string port_speed;     ///< active ports' speeds ("NDR", "HDR"), comma list; "" none
  double link_rate_gbit = 0;  ///< the fastest active port's data rate, Gb/s; 0 unknown
  std::string link_layer;     ///< "InfiniBand", "Ethernet"; "" none
  std::string gpu_model;      ///< GPU names, comma list; "" none
  int hosts = 0;              ///< hosts in the run (0 in a reference: any)
  std::string transport;      ///< accept's all-pairs transport ("ucx", "verbs"); "" other runs
  bool operator==(const HardwareSignature&) const = default;
  /// "mlx5 NDR 400 Gb/s InfiniBand, no GPU, 4 hosts, ucx" (for messages).
  std::string describe() const;
};

HardwareSignature signature_of(const Document& doc);

struct BaselineRun {
  std::string path, started_utc, subcommand;
  HardwareSignature hardware;
};

/// One accept link over the runs: its host pair and NICs, ordered so that (host_a, nic_a) <
/// (host_b, nic_b) whichever way a run listed it.
struct BaselineLink {
  std::string host_a, host_b, nic_a, nic_b;
  measure::RobustStats bw_gbps;     ///< measured_gbps (slower direction / half the bidir sum)
  measure::RobustStats latency_us;  ///< n == 0: never measured
};

/// One collective row over the runs: collective, algorithm, type, size and ranks.
struct BaselineRow {
  std::string collective, algorithm, type;
  std::uint64_t size_bytes = 0;
  int ranks = 0;
  measure::RobustStats busbw_gbps, time_us;
};

/// A public figure for a class of hardware (kind "reference"): never a measurement of ours.
struct ReferenceFigure {
  std::string metric;  ///< "link_bw_gbps": one link's payload rate per direction (GB/s)
  double value_gbps = 0;
  std::string source_url;
  std::string source_says;  ///< what the source says, in its own units
};

enum class BaselineKind { kMeasured, kReference };

struct Baseline {
  BaselineKind kind = BaselineKind::kMeasured;
  std::string name;  ///< a reference's class ("ConnectX-7 NDR"); optional for measured ones
  std::string tool_version, git_sha, created_utc;
  HardwareSignature hardware;
  bool mixed = false;  ///< built with --allow-mixed from runs of different signatures
  std::vector<BaselineRun> runs;
  std::vector<BaselineLink> links;
  std::vector<BaselineRow> rows;
  std::vector<ReferenceFigure> references;
};

const char* name_of(BaselineKind kind) noexcept;

struct BaselineBuildOptions {
  std::size_t min_runs = 3;
  bool allow_mixed = false;
};

/// A baseline from results files (path, document). Throws UsageError naming the runs when
/// fewer than min_runs are given, when their hardware signatures differ (unless allow_mixed:
/// then the first run's signature is kept and mixed set), or when they hold nothing to keep
/// (no acceptance links, no collective rows).
Baseline build_baseline(const std::vector<std::pair<std::string, Document>>& runs,
                        const BaselineBuildOptions& options);

/// The baseline as JSON text (checked against the schema first: a defect throws Error).
std::string baseline_to_text(const Baseline& baseline);
/// Parses and checks a baseline. Throws UsageError "<source>: <path>: <what>".
Baseline parse_baseline(std::string_view text, std::string_view source);
/// Reads and parses FILE. Throws UsageError (unreadable, not a baseline, malformed).
Baseline load_baseline(const std::filesystem::path& path);
/// Writes atomically and exclusively: SystemError(EEXIST) when `path` exists (nothing written).
void write_baseline(const Baseline& baseline, const std::filesystem::path& path);

/// A reference baseline shipped with ibscope (results/baselines/NAME, compiled in).
struct ShippedReference {
  const char* name;
  const char* text;
};
std::span<const ShippedReference> shipped_reference_texts();

/// The shipped references, parsed (a file that does not parse is a build defect: Error).
std::vector<Baseline> shipped_references();

/// The reference for `hardware`: same NIC driver, port speed, rate and link layer; null if none.
const Baseline* match_reference(const std::vector<Baseline>& references,
                                const HardwareSignature& hardware) noexcept;

}  // namespace ibscope::results
