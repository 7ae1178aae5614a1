#pragma once
/// The network as the model sees it: two tiers (inside a node, between nodes), each given by a
/// per-message latency and a per-link payload bandwidth, and the time a collective or a
/// send/recv takes on a group of ranks laid out over nodes. Pure: no I/O, no measurement.
/// Tiers come from fits of measured results (model/link_fit.hpp) or are given directly (a
/// cluster not measured, or one being planned). Formulas: docs/model.md, "Network tiers".

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ibscope/collectives/collective.hpp"

namespace ibscope::model {

/// One tier of a cluster's network.
struct Tier {
  double latency_s = 0;    ///< alpha: per message, per hop
  double bw_gbps = 0;      ///< payload GB/s (1e9 B/s) of one link, one direction
  int links_per_node = 1;  ///< links a node drives at once on this tier (inter: NICs per node)
  std::string source;      ///< where the figures came from, for reports ("given", "fitted: ...")
};

/// A cluster: its layout, its two tiers, the reduction cost, and the algorithm each collective
/// uses (names from the registry, `ibscope algorithms`).
struct ClusterNetwork {
  int nodes = 1;
  int gpus_per_node = 1;        ///< ranks per node
  Tier intra;                   ///< between ranks of one node (NVLink-class; bw per rank)
  Tier inter;                   ///< between nodes (the fabric; bw per NIC)
  double gamma_s_per_byte = 0;  ///< seconds per byte reduced
  /// The algorithm of each collective; a collective not named here uses its first registered
  /// one (the ring). Set and read them with algorithm_of().
  std::map<Collective, std::string> algorithms;
  /// All-to-all has tiers of its own, fitted from measured all-to-all rows (`ibscope alltoall`
  /// results given to --fit): its messages go to every peer at once, which the all-reduce's
  /// per-hop figures do not describe. A tier absent here leaves the all-to-alls that cross it
  /// unpriced (NetworkModel::unpriced), never priced from another collective's fit.
  std::optional<Tier> alltoall_intra;
  std::optional<Tier> alltoall_inter;  ///< its links_per_node: the inter tier's
  /// Why measured all-to-all rows gave no tier (e.g. times that do not grow with size); said
  /// with the all-to-alls left unpriced. Empty when none was refused.
  std::string alltoall_intra_not_fitted;
  std::string alltoall_inter_not_fitted;
};

/// The algorithm name `cluster` uses for collective `c`.
std::string algorithm_of(const ClusterNetwork& cluster, Collective c);
/// The same, to set it (added with the default when absent).
std::string& algorithm_of(ClusterNetwork& cluster, Collective c);

/// A group of ranks that runs one collective: `ranks` ranks, `ranks_per_node` of them on each
/// node the group spans (ranks == ranks_per_node: inside one node), and `concurrent_per_node`
/// groups that run at the same time from one node and share its inter-node links (e.g. 8
/// data-parallel groups per node when tensor parallelism fills the node).
struct Group {
  int ranks = 1;
  int ranks_per_node = 1;
  int concurrent_per_node = 1;
};

/// Time of communication operations on a cluster. Implementations are pure and thread-safe.
class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  /// Seconds for one call of `c` on `bytes` (the full vector, nccl-tests' convention) in `g`.
  /// 0 for a group of one rank. Throws UsageError for an impossible group.
  virtual double collective_s(Collective c, double bytes, const Group& g) const = 0;
  /// Seconds to send `bytes` to one peer (and receive as many from another at the same time),
  /// across nodes or inside one, with `concurrent_per_node` such transfers sharing the tier.
  virtual double sendrecv_s(double bytes, bool across_nodes, int concurrent_per_node) const = 0;
  /// Why `c` on `g` cannot be priced (e.g. no all-to-all fit for a tier the group crosses), or
  /// nothing when collective_s() prices it.
  virtual std::optional<std::string> unpriced(Collective c, const Group& g) const {
    (void)c;
    (void)g;
    return std::nullopt;
  }
};

/// The tiered alpha-beta-gamma model of docs/model.md over the registry's cost formulas.
/// Throws UsageError for a tier without bandwidth or an unknown algorithm name.
std::unique_ptr<NetworkModel> make_network_model(const ClusterNetwork& cluster);

}  // namespace ibscope::model
