#include "ibscope/model/network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"

namespace ibscope::model {
namespace {

using units::kBytesPerGB;

void check_tier(const Tier& t, std::string_view name) {
  if (!(t.bw_gbps > 0) || !std::isfinite(t.bw_gbps)) {
    throw UsageError(
        fmt::format("the {} tier has no bandwidth ({} GB/s): give it one, or fit "
                    "it from results measured across that tier",
                    name, t.bw_gbps));
  }
  if (!(t.latency_s >= 0) || !std::isfinite(t.latency_s)) {
    throw UsageError(
        fmt::format("the {} tier's latency must be >= 0 s, not {}", name, t.latency_s));
  }
  if (t.links_per_node < 1) {
    throw UsageError(
        fmt::format("the {} tier needs at least 1 link per node, not {}", name, t.links_per_node));
  }
}

void check_group(const Group& g) {
  if (g.ranks < 1 || g.ranks_per_node < 1 || g.concurrent_per_node < 1 ||
      g.ranks_per_node > g.ranks || g.ranks % g.ranks_per_node != 0) {
    throw UsageError(fmt::format(
        "impossible group: {} ranks, {} per node, {} concurrent per node (ranks must be a "
        "multiple of ranks per node; every count at least 1)",
        g.ranks, g.ranks_per_node, g.concurrent_per_node));
  }
}

// Bandwidth one group gets from a node's inter-node links: the node's links are shared by the
// groups that run at once from it, and a group cannot use more links than it has ranks on the
// node (each rank drives its own rail, as NCCL's channels do). docs/model.md, "Network tiers".
double inter_share_gbps(const Tier& inter, int ranks_on_node, int concurrent_per_node) {
  const double links = std::min(static_cast<double>(inter.links_per_node) / concurrent_per_node,
                                static_cast<double>(ranks_on_node));
  return inter.bw_gbps * links;
}

class TieredNetwork final : public NetworkModel {
 public:
  explicit TieredNetwork(ClusterNetwork c) : c_(std::move(c)) {
    if (c_.nodes < 1 || c_.gpus_per_node < 1) {
      throw UsageError(
          fmt::format("a cluster needs at least 1 node and 1 rank per node, not {} "
                      "nodes x {} ranks",
                      c_.nodes, c_.gpus_per_node));
    }
    if (c_.gpus_per_node > 1) check_tier(c_.intra, "intra-node");
    if (c_.nodes > 1) check_tier(c_.inter, "inter-node");
    if (!(c_.gamma_s_per_byte >= 0)) {
      throw UsageError(
          fmt::format("the reduction cost gamma must be >= 0 s/B, not {}", c_.gamma_s_per_byte));
    }
    for (const auto& d : collectives::descriptors())
      collectives::find_algorithm(d.id, algorithm_of(c_, d.id));
  }

  double collective_s(Collective coll, double bytes, const Group& g) const override {
    check_group(g);
    if (g.ranks == 1) return 0;
    if (coll != Collective::kAlltoall) return tiered_s(coll, bytes, g, c_.intra, c_.inter);
    if (const auto why = unpriced(coll, g)) throw UsageError(*why);
    return tiered_s(coll, bytes, g, c_.alltoall_intra.value_or(Tier{}),
                    c_.alltoall_inter.value_or(Tier{}));
  }

  std::optional<std::string> unpriced(Collective coll, const Group& g) const override {
    if (coll != Collective::kAlltoall || g.ranks <= 1) return std::nullopt;
    const bool crosses_nodes = g.ranks > g.ranks_per_node;
    const bool inside_nodes = g.ranks_per_node > 1;
    std::vector<std::string> missing, reasons;
    if (inside_nodes && !c_.alltoall_intra) {
      missing.emplace_back("intra-node");
      if (!c_.alltoall_intra_not_fitted.empty()) reasons.push_back(c_.alltoall_intra_not_fitted);
    }
    if (crosses_nodes && !c_.alltoall_inter) {
      missing.emplace_back("inter-node");
      if (!c_.alltoall_inter_not_fitted.empty()) reasons.push_back(c_.alltoall_inter_not_fitted);
    }
    if (missing.empty()) return std::nullopt;
    return fmt::format(
        "no all-to-all fit for the {} tier that a {}-rank group with {} per node crosses: "
        "measure 'ibscope alltoall -A {}' {} and give the results to --fit{}",
        fmt::join(missing, " and "), g.ranks, g.ranks_per_node,
        algorithm_of(c_, Collective::kAlltoall),
        crosses_nodes ? "with one rank per host" : "with every rank on one host",
        reasons.empty() ? "" : fmt::format(" ({})", fmt::join(reasons, "; ")));
  }

  double sendrecv_s(double bytes, bool across_nodes, int concurrent_per_node) const override {
    if (concurrent_per_node < 1) {
      throw UsageError(
          fmt::format("concurrent transfers per node must be >= 1, not {}", concurrent_per_node));
    }
    const Tier& t = across_nodes ? c_.inter : c_.intra;
    check_tier(t, across_nodes ? "inter-node" : "intra-node");
    const double bw = across_nodes ? inter_share_gbps(t, 1, concurrent_per_node) : t.bw_gbps;
    return t.latency_s + bytes / (bw * kBytesPerGB);
  }

 private:
  // The tiered cost of docs/model.md, "Tiers", over the given pair of tiers.
  double tiered_s(Collective coll, double bytes, const Group& g, const Tier& intra_tier,
                  const Tier& inter_tier) const {
    const bool crosses_nodes = g.ranks > g.ranks_per_node;
    const bool inside_nodes = g.ranks_per_node > 1;
    if (crosses_nodes && c_.nodes < 2) {
      throw UsageError(
          fmt::format("a group of {} ranks with {} per node spans several nodes, "
                      "but the cluster has 1",
                      g.ranks, g.ranks_per_node));
    }
    if (inside_nodes && g.ranks_per_node > c_.gpus_per_node) {
      throw UsageError(
          fmt::format("a group with {} ranks per node does not fit {} ranks per "
                      "node",
                      g.ranks_per_node, c_.gpus_per_node));
    }
    const auto& algorithm = collectives::find_algorithm(coll, algorithm_of(c_, coll));
    // An algorithm over two tiers (the hierarchical all-reduce) prices each apart: its
    // shared-memory steps at the intra-node cost, the ring per rail at the inter-node cost, on
    // 1/ranks_per_node of the bytes (collectives/cost.hpp, hier_allreduce_cost_s).
    if (algorithm.caps.two_tier_cost_s && inside_nodes) {
      check_tier(intra_tier, "intra-node");
      if (crosses_nodes) check_tier(inter_tier, "inter-node");
      collectives::LinkCost intra{intra_tier.latency_s, 1 / (intra_tier.bw_gbps * kBytesPerGB),
                                  c_.gamma_s_per_byte};
      // One ring per local rank runs at once, each on its rank's rail (none inside one node).
      const double share =
          crosses_nodes ? inter_share_gbps(inter_tier, 1, g.concurrent_per_node * g.ranks_per_node)
                        : 1.0;
      collectives::LinkCost inter{inter_tier.latency_s, 1 / (share * kBytesPerGB),
                                  c_.gamma_s_per_byte};
      return algorithm.caps.two_tier_cost_s(intra, inter, bytes, g.ranks_per_node,
                                            g.ranks / g.ranks_per_node);
    }
    // Every step of the algorithm waits for its slowest hop: the latency and the per-byte time
    // of a step are the worse of the tiers the group's hops cross.
    collectives::LinkCost link;
    link.gamma_s_per_byte = c_.gamma_s_per_byte;
    if (inside_nodes) {
      check_tier(intra_tier, "intra-node");
      link.alpha_s = intra_tier.latency_s;
      link.beta_s_per_byte = 1 / (intra_tier.bw_gbps * kBytesPerGB);
    }
    if (crosses_nodes) {
      check_tier(inter_tier, "inter-node");
      // An all-to-all sends from every rank of the group at once, so each rank gets its own
      // share of the node's links; a ring or tree crosses with one rank at a time.
      const double share =
          coll == Collective::kAlltoall
              ? inter_share_gbps(inter_tier, 1, g.concurrent_per_node * g.ranks_per_node)
              : inter_share_gbps(inter_tier, g.ranks_per_node, g.concurrent_per_node);
      link.alpha_s = std::max(link.alpha_s, inter_tier.latency_s);
      link.beta_s_per_byte = std::max(link.beta_s_per_byte, 1 / (share * kBytesPerGB));
    }
    return algorithm.cost_s(link, bytes, g.ranks);
  }

  ClusterNetwork c_;
};

}  // namespace

std::string algorithm_of(const ClusterNetwork& c, Collective coll) {
  const auto it = c.algorithms.find(coll);
  if (it != c.algorithms.end()) return it->second;
  return std::string(collectives::algorithms_for(coll).front().name);
}

std::string& algorithm_of(ClusterNetwork& c, Collective coll) {
  const auto it = c.algorithms.find(coll);
  if (it != c.algorithms.end()) return it->second;
  return c.algorithms[coll] = std::string(collectives::algorithms_for(coll).front().name);
}

std::unique_ptr<NetworkModel> make_network_model(const ClusterNetwork& cluster) {
  return std::make_unique<TieredNetwork>(cluster);
}

}  // namespace ibscope::model
