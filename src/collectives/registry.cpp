// The one registry of every collective's algorithms: each entry is name, description, cost
// formula, factory and capabilities, in the same shape for every collective (collective.hpp).
#include <fmt/format.h>

#include "ibscope/collectives/algorithms/dbt_allreduce.hpp"
#include "ibscope/collectives/algorithms/hier_allreduce.hpp"
#include "ibscope/collectives/algorithms/hier_alltoall.hpp"
#include "ibscope/collectives/algorithms/hier_alltoallv.hpp"
#include "ibscope/collectives/algorithms/pairwise_alltoall.hpp"
#include "ibscope/collectives/algorithms/pairwise_alltoallv.hpp"
#include "ibscope/collectives/algorithms/rd_allreduce.hpp"
#include "ibscope/collectives/algorithms/rhd_allreduce.hpp"
#include "ibscope/collectives/algorithms/ring_allgather.hpp"
#include "ibscope/collectives/algorithms/ring_allreduce.hpp"
#include "ibscope/collectives/algorithms/ring_broadcast.hpp"
#include "ibscope/collectives/algorithms/ring_reduce_scatter.hpp"
#include "ibscope/collectives/algorithms/scattered_alltoall.hpp"
#include "ibscope/collectives/algorithms/scattered_alltoallv.hpp"
#include "ibscope/collectives/algorithms/tree_allreduce.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::collectives {

namespace {

template <typename Algorithm>
std::unique_ptr<CollectiveAlgorithm> make_algorithm(transport::Comm& comm,
                                                    const AlgorithmOptions& o) {
  return std::make_unique<Algorithm>(comm, o);
}

// A hierarchical algorithm's capabilities (-A hier): it reads local peers' buffers in place
// through the intra-host arena, host memory only (`host_memory_only`, a literal, says so and
// names what GPU buffers keep), and is priced per tier by `cost` on the tiers that the rows of
// `fitted_by` give.
AlgorithmCapabilities hier_capabilities(std::string_view host_memory_only,
                                        decltype(AlgorithmCapabilities::two_tier_cost_s) cost,
                                        std::string_view fitted_by) {
  return {.needs_intra_host_arena = true,
          .host_memory_only = host_memory_only,
          .two_tier_cost_s = std::move(cost),
          .tiers_fitted_by = fitted_by};
}

const std::vector<CollectiveAlgorithmInfo>& allreduce_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring",
       "reduce-scatter + all-gather around a ring, pipelined in chunks; bandwidth-optimal",
       ring_allreduce_cost_s,
       make_algorithm<RingAllreduce>,
       {.nccl_name = "ring"}},
      {"rd", "recursive doubling of whole vectors; latency-optimal for small messages",
       rd_allreduce_cost_s, make_algorithm<RdAllreduce>},
      {"rhd",
       "Rabenseifner: recursive-halving reduce-scatter + recursive-doubling all-gather, chunked",
       rhd_allreduce_cost_s, make_algorithm<RhdAllreduce>},
      {"tree",
       "binary tree: chunks reduced up to the root and broadcast down, pipelined; few steps",
       tree_allreduce_cost_s,
       make_algorithm<TreeAllreduce>,
       {.nccl_name = "tree"}},
      {"dbt",
       "double binary tree: two complementary pipelined trees, half the data each; log steps, "
       "ring-like bandwidth",
       dbt_allreduce_cost_s,
       make_algorithm<DbtAllreduce>,
       {.nccl_name = "tree"}},
      {"hier",
       "hierarchical: reduce-scatter in shared memory, reading local peers' buffers in place; a "
       "ring per rail between hosts; all-gather in shared memory (host memory)",
       hier_allreduce_one_tier_cost_s, make_algorithm<HierAllreduce>,
       hier_capabilities("-A hier reads local peers' buffers in place: host memory on the host "
                         "path only (--mem host, --mem-path host); GPU buffers keep -A ring, "
                         "tree or dbt",
                         hier_allreduce_cost_s, "ring")},
  };
  return kAlgorithms;
}

const std::vector<CollectiveAlgorithmInfo>& reduce_scatter_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring",
       "p-1 ring steps, pipelined in chunks; bandwidth-optimal",
       ring_reduce_scatter_cost_s,
       make_algorithm<RingReduceScatter>,
       {.nccl_name = "ring"}},
  };
  return kAlgorithms;
}

const std::vector<CollectiveAlgorithmInfo>& allgather_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring",
       "p-1 ring steps, pipelined in chunks; bandwidth-optimal",
       ring_allgather_cost_s,
       make_algorithm<RingAllgather>,
       {.nccl_name = "ring"}},
  };
  return kAlgorithms;
}

const std::vector<CollectiveAlgorithmInfo>& broadcast_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring",
       "chain from the root along the ring, pipelined in chunks",
       ring_broadcast_cost_s,
       make_algorithm<RingBroadcast>,
       {.nccl_name = "ring"}},
  };
  return kAlgorithms;
}

// All-to-all's and all-to-all-v's hier: what GPU buffers keep instead.
constexpr std::string_view kHierExchangeHostOnly =
    "-A hier reads local peers' buffers in place: host memory on the host path only "
    "(--mem host, --mem-path host); GPU buffers keep -A pairwise or scattered";

const std::vector<CollectiveAlgorithmInfo>& alltoall_algorithms() {
  static_assert(kScatteredWindowPeers == 32, "scattered's description names its window");
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"pairwise",
       "p-1 rounds, one peer each: send to r+k, receive from r-k (in place: exchange with k-r "
       "through a one-block scratch)",
       pairwise_alltoall_cost_s, make_algorithm<PairwiseAlltoall>},
      {"scattered", "every message posted at once, in windows of 32 peers; one latency per window",
       scattered_alltoall_cost_s, make_algorithm<ScatteredAlltoall>},
      {"hier",
       "hierarchical: each rank gathers its host's blocks for its rail peers from the local "
       "ranks' buffers in place, one message per host pair on each rail; local blocks copied "
       "straight from the local ranks (host memory)",
       hier_alltoall_one_tier_cost_s, make_algorithm<HierAlltoall>,
       hier_capabilities(kHierExchangeHostOnly, hier_alltoall_cost_s, "scattered")},
  };
  return kAlgorithms;
}

const std::vector<CollectiveAlgorithmInfo>& alltoallv_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"pairwise",
       "p-1 rounds, one peer each: send to r+k, receive from r-k, per-peer counts; empty blocks "
       "send nothing",
       pairwise_alltoallv_cost_s, make_algorithm<PairwiseAlltoallv>},
      {"scattered",
       "every message posted at once, in windows of 32 peers, per-peer counts; empty blocks send "
       "nothing",
       scattered_alltoallv_cost_s, make_algorithm<ScatteredAlltoallv>},
      // Priced as the hierarchical all-to-all at the mean size (hier_alltoallv.hpp).
      {"hier",
       "hierarchical: each rank gathers its host's blocks for its rail peers from the local "
       "ranks' buffers in place, one message per host pair on each rail (empty ones not sent); "
       "local blocks copied straight from the local ranks (host memory)",
       hier_alltoall_one_tier_cost_s, make_algorithm<HierAlltoallv>,
       hier_capabilities(kHierExchangeHostOnly, hier_alltoall_cost_s, "scattered")},
  };
  return kAlgorithms;
}

}  // namespace

std::span<const CollectiveAlgorithmInfo> algorithms_for(Collective c) {
  switch (c) {
    case Collective::kAllreduce:
      return allreduce_algorithms();
    case Collective::kReduceScatter:
      return reduce_scatter_algorithms();
    case Collective::kAllgather:
      return allgather_algorithms();
    case Collective::kBroadcast:
      return broadcast_algorithms();
    case Collective::kAlltoall:
      return alltoall_algorithms();
    case Collective::kAlltoallv:
      return alltoallv_algorithms();
  }
  return allreduce_algorithms();
}

const CollectiveAlgorithmInfo& find_algorithm(Collective c, std::string_view name) {
  std::string names;
  for (const auto& a : algorithms_for(c)) {
    if (a.name == name) return a;
    names += names.empty() ? std::string(a.name) : fmt::format(", {}", a.name);
  }
  throw UsageError(fmt::format("-A/--algo: unknown algorithm '{}' for {} (available: {})", name,
                               name_of(c), names));
}

}  // namespace ibscope::collectives
