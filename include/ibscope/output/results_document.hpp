#pragma once
/// The results file: one JSON schema for every subcommand (results/README.md documents it).
/// Built up during a run and written once, atomically, never over an existing file. A run that
/// fails is still written, with "complete": false and the error.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ibscope/measure/records.hpp"

namespace ibscope {

inline constexpr int kResultsSchemaVersion = 1;

class ResultsDocument {
 public:
  /// `subcommand` ("run", "allreduce", "p2p"); `argv` as given.
  ResultsDocument(std::string subcommand, std::vector<std::string> argv);

  /// Job and environment: hosts per rank, bootstrap kind, UCX version, UCX_* variables,
  /// transports per peer, CPU cores, warnings.
  nlohmann::json& job() { return doc_["job"]; }
  nlohmann::json& environment() { return doc_["environment"]; }
  void add_warning(const std::string& warning);
  void set_params(const std::string& section, nlohmann::json params);
  /// The "tuning" section: crossover points measured by this run (collectives/harness/tuning.hpp).
  void set_tuning(nlohmann::json tuning) { doc_["tuning"] = std::move(tuning); }
  /// The "topology" section: one entry per host (topo/topology_json.hpp, `ibscope topo`).
  void set_topology(nlohmann::json topology) { doc_["topology"] = std::move(topology); }
  /// The "acceptance" section (`ibscope accept`: preflight, link and host verdicts, stragglers).
  void set_acceptance(nlohmann::json acceptance) { doc_["acceptance"] = std::move(acceptance); }
  /// The "soak" section (`ibscope soak`: params, windows, summary and verdict).
  void set_soak(nlohmann::json soak) { doc_["soak"] = std::move(soak); }
  void add_row(const CollectiveRow& row);
  void add_row(const P2pRow& row);
  /// Adds to the "probes" section (created on first use: files without probes omit it).
  void add_row(const ProbeRow& row);
  /// Marks the run failed (written with complete = false).
  void set_error(const std::string& kind, const std::string& message);

  /// Stamps finished_utc and writes `<dir>/ibscope-<subcommand>-<UTC time>-<random>.json`
  /// atomically (temp file + fsync + link: never replaces an existing file). Creates `dir`.
  /// Returns the path. Throws SystemError.
  std::filesystem::path write(const std::filesystem::path& dir);
  /// The rows as CSV (a header per section, one line per row, raw samples omitted).
  std::string csv() const;
  /// csv() written beside the JSON (same name, .csv), exclusively. Returns the path.
  std::filesystem::path write_csv(const std::filesystem::path& json_path) const;

  const nlohmann::json& json() const { return doc_; }

 private:
  std::string subcommand_;
  nlohmann::json doc_;
};

/// Writes `content` to `path` atomically and exclusively: fails with SystemError(EEXIST) if the
/// path exists; a crash never leaves a partial file under `path`.
void write_file_exclusive(const std::filesystem::path& path, const std::string& content);

/// Writes `content` to `path` atomically, replacing what is there: a reader sees the old file or
/// the new one, never a partial one (a temp file in the same folder, fsync, rename). For files
/// that are meant to be replaced (a Prometheus textfile, a generated man page), never results.
/// Throws SystemError.
void write_file_replacing(const std::filesystem::path& path, const std::string& content);

/// UTC timestamp "2026-12-02T13:45:07Z".
std::string utc_now_iso8601();

nlohmann::json to_json(const Stats& s);
nlohmann::json to_json(const std::vector<Stall>& stalls);
nlohmann::json to_json(const CollectiveRow& row);
nlohmann::json to_json(const P2pRow& row);
nlohmann::json to_json(const ProbeRow& row);

}  // namespace ibscope
