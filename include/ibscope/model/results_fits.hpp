#pragma once
/// Fits of everything a results file measured (results/README.md): every collective curve
/// (one per collective, algorithm, transport, rank count, host count, in place or not, type and
/// op) and every link (p2p latency/bw/bibw rows per rank pair, verbs probe rows per rank pair),
/// each a piecewise alpha-beta fit (model/curve_fit.hpp) of the per-size median time. Pure:
/// takes documents already loaded and validated (results/loader.hpp). Method and
/// fields: docs/model.md, "Fits (`ibscope fit`)".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/model/curve_fit.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::model {

/// What a curve measured. `id()` names it uniquely within one source file.
struct CurveKey {
  std::string collective;  ///< "allreduce", "reduce_scatter", "allgather", "broadcast"
  std::string algorithm;   ///< "ring", "rd", "rhd", "tree", "dbt", ...
  std::string transport;   ///< transport_label() of the file's UCX lanes
  int ranks = 0;
  int hosts = 0;  ///< distinct job.hosts
  bool in_place = false;
  std::string type, op;  ///< nccl-tests names; op "none" for allgather and broadcast
  int root = -1;         ///< broadcast root; -1 when the rows carry none
  /// "allreduce/ring/sysv+posix/p4/h1/out/float/sum" (in place: "in"; root: "/root0").
  std::string id() const;
};

struct CurveResult {
  std::string source;  ///< the results file, as given
  CurveKey key;
  CurveFit fit;           ///< times in seconds; segments carry `link` when the cost is known
  int dropped_rows = 0;   ///< rows left out: #wrong > 0 or a median time <= 0
  std::string link_note;  ///< why `link` is absent, or what it means; may be empty
};

struct LinkResult {
  std::string source;
  std::string kind;  ///< "p2p" (UCX) or "verbs" (probes)
  std::string test;  ///< "latency", "bw", "bibw"; "write_lat", "write_bw", ... for verbs
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b;
  std::string transport;  ///< p2p: transport_label(); verbs: "device_a->device_b"
  /// What the fit's x and y are: "half round trip vs message bytes", "window time vs window
  /// bytes", "time per message vs message bytes" (from verbs bw_gbps).
  std::string fitted;
  double alpha_us = 0;  ///< intercept of the first (smallest sizes) segment
  double bw_gbps = 0;   ///< 1 / slope of the last (largest sizes) segment; 0 when unresolved
  CurveFit fit;
  /// "allreduce/..."-style identifier: "p2p/latency/0-1", "verbs/write_bw/0-1".
  std::string id() const;
};

struct FitFilter {
  std::optional<std::string> collective;  ///< fit only this collective's curves
  std::optional<std::string> algorithm;   ///< fit only this algorithm's curves
};

struct FitReport {
  std::vector<std::string> sources;
  std::vector<CurveResult> curves;
  std::vector<LinkResult> links;
  std::vector<std::string> notes;  ///< curves or links skipped, and why
};

/// A short label for UCX lanes as the results file shows them ("sysv/memory[am,...]
/// posix/memory | tag_send ..."): the distinct transport names before '/', in order, joined
/// by '+' ("sysv+posix", "tcp", "rc_mlx5"); "unknown" when there are none.
std::string transport_label(std::string_view lanes);
/// One label for a whole file: the labels of every rank pair in environment.transports,
/// distinct, joined by ',' in first-seen order (e.g. "sysv+posix,tcp" when some pairs share a
/// host and some do not); "unknown" when the file lists none; "nccl" for nccl-tests output.
std::string file_transport_label(const results::Document& results);

/// Fits every curve and link of one validated document into `report` (appends, and adds
/// `source` to report.sources). A curve or link with fewer than 3 sizes is skipped with a note.
void fit_results(const results::Document& results, const std::string& source,
                 const FitFilter& filter, FitReport& report, const CurveFitOptions& options = {});

}  // namespace ibscope::model
