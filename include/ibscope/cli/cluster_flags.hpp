#pragma once
/// The cluster a prediction or a training-step model runs on (model/network.hpp), from flags:
/// tiers fitted from measured results files (`--fit`), given directly (a cluster not measured,
/// or one being planned), or both (a given figure overrides the fitted one). Shared by
/// `ibscope predict` and `ibscope model`.

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/model/network.hpp"
#include "ibscope/results/document.hpp"

namespace ibscope::cli {

struct ClusterFlags {
  std::vector<std::string> fit_files;  ///< results files to fit the tiers from
  int nodes = 0;                       ///< 0: not given (1, or the workload's)
  int gpus_per_node = 0;               ///< 0: not given (1, or the workload's)
  double inter_lat_us = -1;            ///< < 0: not given
  double inter_bw_gbps = -1;
  int inter_links = 1;
  double intra_lat_us = -1;
  double intra_bw_gbps = -1;
  double reduce_gbps = 0;  ///< reduction rate (GB/s of input reduced); 0: none or folded
  /// --<collective>-algo, for each collective the training-step model prices (descriptor's
  /// in_training_model); one not given: its first registered algorithm (ring).
  std::map<Collective, std::string> algorithms;
  /// --nccl-algorithm: the all-reduce algorithm NCCL ran in the --fit nccl-tests outputs
  /// (NCCL_ALGO when they were measured); empty: their rows fit no formula's tiers.
  std::string nccl_algorithm;
};

/// Adds --fit, --nodes, --gpus-per-node, --inter-lat-us, --inter-bw-gbps, --inter-links,
/// --intra-lat-us, --intra-bw-gbps, --reduce-gbps and --allreduce-algo,
/// --reduce-scatter-algo, --allgather-algo (one per collective of the training model) to `app`.
void add_cluster_flags(CLI::App& app, ClusterFlags& f);

/// With --nccl-algorithm, the rows of nccl-tests outputs among `docs` (algorithm "nccl") take
/// the name of the ibscope algorithm whose formula NCCL's follows (Ring: ring, Tree: dbt), so
/// that they fit and compare as that algorithm's rows. Without it, does nothing. Throws
/// UsageError for an algorithm NCCL does not have.
void apply_nccl_algorithm(const ClusterFlags& f, std::vector<results::Document>& docs);

/// Loads and fits the --fit files, then applies the given figures. The all-reduce rows of
/// `fit_algorithm` (empty: --allreduce-algo) are fitted through that algorithm's cost formula;
/// files whose ranks are all on one host give the intra-node tier, files with one rank per
/// host the inter-node tier (model/link_fit.hpp). Files without such rows contribute their
/// p2p or verbs links instead (pairs on different hosts: inter; on one host: intra), used for
/// a tier no all-reduce rows fitted. Tiers that are neither fitted nor given keep
/// bandwidth 0 (make_network_model refuses them when a group needs them). nccl-tests outputs
/// fit a tier only with --nccl-algorithm (their rows stand for that algorithm's formula): a run
/// on several hosts the inter-node tier, on one host the intra-node tier. Each tier's `source`
/// says where its figures came from. Throws UsageError.
model::ClusterNetwork to_cluster(const ClusterFlags& f, const std::string& fit_algorithm = "");
/// The same with the --fit files already loaded (`fit_docs[i]` is `f.fit_files[i]`).
model::ClusterNetwork to_cluster(const ClusterFlags& f,
                                 const std::vector<results::Document>& fit_docs,
                                 const std::string& fit_algorithm = "");

}  // namespace ibscope::cli
