#pragma once
/// nccl-tests' standard output as input (issue 39): all_reduce_perf, all_gather_perf,
/// reduce_scatter_perf, broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf and the rest
/// print a banner ("# nThread 1 nGpus 1 minBytes ...", one "#  Rank  0 Group  0 Pid ... on HOST
/// device 0 [..] NAME" line per rank), a table whose columns the header names ("size count type
/// redop root time algbw busbw #wrong time algbw busbw #wrong": out of place, then in place) and
/// a footer ("# Out of bounds values : 0 OK", "# Avg bus bandwidth : X"). The parser reads the
/// columns from the header, so the older layouts (no redop/root, "error" instead of "#wrong") and
/// the newer ones (per-iteration columns, timestamps, cputime) read alike. Lines that are not
/// nccl-tests' (NCCL INFO logs, a launcher's warnings, a pasted command line) are skipped outside
/// table rows. Its JSON output (`-J`, nccl-tests 2.17+) is read into the same runs.
/// docs/nccl-tests.md describes what is read and how it maps onto results rows.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::results {

/// Malformed or truncated nccl-tests output: a UsageError (exit 2) whose message starts
/// "FILE:LINE:COLUMN: " (1-based; the column of the offending field, or one past the end of a
/// short row).
class NcclTestsParseError : public UsageError {
 public:
  NcclTestsParseError(std::string file, int line, int column, std::string_view what);
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }

 private:
  std::string file_;
  int line_, column_;
};

/// One table row half: the out-of-place or the in-place figures of one size.
struct NcclTestsRow {
  std::uint64_t size_bytes = 0, count = 0;
  std::string type;   ///< nccl-tests' name: "float", "bfloat16", "int8", ...
  std::string redop;  ///< "sum", "prod", "min", "max", "avg", "none" ("none" when absent)
  int root = -1;      ///< -1 when the collective has none or the column is absent
  bool in_place = false;
  double time_us = 0;  ///< nccl-tests' time (or cputime) column
  double algbw_gbps = 0, busbw_gbps = 0;
  std::optional<std::uint64_t> wrong;  ///< "#wrong"; empty for "N/A" (-c 0) or an "error" column
  int line = 0;                        ///< where the row is in the file
};

struct NcclTestsRank {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string device_name;  ///< "NVIDIA H100 80GB HBM3"
};

/// One run: a banner, its table and its footer (a file may hold several, one after another).
struct NcclTestsRun {
  std::string program;     ///< "all_reduce_perf"
  std::string collective;  ///< "all_reduce", "all_gather", "reduce_scatter", "broadcast", ...
  std::string version;     ///< "2.18.2" from "# nccl-tests version"; empty in older outputs
  std::string banner;      ///< the "# nThread ..." line without "# "
  int threads = 0, gpus_per_thread = 0, iters = 0, warmup_iters = 0;
  std::vector<NcclTestsRank> ranks;  ///< the "# Rank" lines, in order
  std::vector<NcclTestsRow> rows;    ///< out of place then in place, per size, file order
  std::optional<std::uint64_t> out_of_bounds;
  std::optional<double> avg_busbw_gbps;
  int first_line = 0;  ///< the banner's line
  /// Ranks of the job: the "# Rank" lines, or nThread x nGpus when the output has none.
  int rank_count() const;
};

struct NcclTestsOutput {
  std::vector<NcclTestsRun> runs;
};

/// True when `text` reads as nccl-tests output: it does not open with '{' (a results file) and
/// has a "nThread" banner or an "algbw" column. The loader (results/loader.hpp) decides by this.
bool looks_like_nccl_tests(std::string_view text);

/// Parses nccl-tests' stdout. `source` names the file in messages; its base name is also the
/// last resort for which program ran ("all_gather_perf.log") when the output does not say
/// ("# Collective test starting:", or a command line echoed before the banner). Throws
/// NcclTestsParseError.
NcclTestsOutput parse_nccl_tests(std::string_view text, std::string_view source);

/// True when `text` reads as nccl-tests' JSON output (`-J FILE.json`, nccl-tests 2.17 and later:
/// it has "nccl_version" and no "schema_version").
bool looks_like_nccl_tests_json(std::string_view text);

/// Parses nccl-tests' JSON output into one run: the program from args[0] (else the file's name),
/// ranks from config.devices (one entry per process) x nthreads x ngpus, rows from results[]
/// (out_of_place, in_place: time or cpu_time, alg_bw, bus_bw, nwrong). Throws UsageError naming
/// the file and the JSON path (not a line: the writer puts a file on few lines).
NcclTestsOutput parse_nccl_tests_json(std::string_view text, std::string_view source);

/// The runs as an ibscope results document: one collective row per row half of the collectives
/// ibscope knows (all_reduce, all_gather, reduce_scatter, broadcast), algorithm "nccl", memory
/// "cuda", time_us = nccl-tests' time, its one sample; rows of other programs, types or ops are
/// left out with a warning each. Throws UsageError when the runs disagree on the job (ranks).
Document to_document(const NcclTestsOutput& output, std::string_view source);

}  // namespace ibscope::results
