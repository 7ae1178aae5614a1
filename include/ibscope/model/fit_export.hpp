#pragma once
/// What `ibscope fit` writes, as text: the versioned JSON document, the plot-ready series CSV
/// (measured vs fitted per size), and the CSV NCCL's example tuner plugin scripts take
/// (plugins/tuner/example/scripts/optimize_config.py in NVIDIA/nccl). Pure: strings out; the
/// command writes them. Formats: docs/model.md, "Fits" and "NCCL tuner CSV".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/model/results_fits.hpp"

namespace ibscope::model {

inline constexpr int kFitSchemaVersion = 1;

/// {"kind": "ibscope-fit", "schema_version": 1, "statistic": "p50", "sources": [...],
///  "curves": [...], "links": [...], "notes": [...]}; times in µs, bandwidths in GB/s
/// (1e9 B/s), null where a bandwidth is unresolved (zero slope). Indented by 2, with a
/// trailing newline.
std::string fit_document_text(const FitReport& report);

/// "curve_id,source,size_bytes,measured_us,fitted_us,residual_pct" and one line per measured
/// size of every curve and link (links' size_bytes is the fit's x: window bytes for bw tests).
std::string series_csv(const FitReport& report);

/// NCCL's name for an ibscope collective ("allreduce", "reducescatter", "allgather",
/// "broadcast") and algorithm ("ring"; "tree" for tree and dbt); nullopt when NCCL has none.
std::optional<std::string> nccl_collective(std::string_view collective);
std::optional<std::string> nccl_algorithm(std::string_view algorithm);

struct NcclCsv {
  std::string text;                ///< header and one line per measured size of each curve
  std::vector<std::string> notes;  ///< curves left out, and why
};
/// collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,
/// bandwidth_gbps,latency_us: from each curve's fitted time t at its measured sizes n:
/// latency_us = cost_metric = t in µs, bandwidth_gbps = n / t / 1e9 (algbw), protocol
/// "simple", channels/pipeOps/regBuff -1 (any), nodes = hosts, ranks = p.
NcclCsv nccl_tuner_csv(const FitReport& report);

}  // namespace ibscope::model
