#include "ibscope/collectives/allreduce.hpp"

#include <fmt/format.h>

#include <cstring>

#include "ibscope/collectives/algorithms/dbt_allreduce.hpp"
#include "ibscope/collectives/algorithms/rd_allreduce.hpp"
#include "ibscope/collectives/algorithms/rhd_allreduce.hpp"
#include "ibscope/collectives/algorithms/ring_allreduce.hpp"
#include "ibscope/collectives/algorithms/tree_allreduce.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope {

const std::vector<AllreduceAlgorithmInfo>& allreduce_algorithms() {
  static const std::vector<AllreduceAlgorithmInfo> kAlgorithms = {
      {"ring", "reduce-scatter + all-gather around a ring, pipelined in chunks; bandwidth-optimal",
       ring_allreduce_cost_s,
       [](ucx::Comm& comm, const AlgorithmOptions& o) -> std::unique_ptr<AllreduceAlgorithm> {
         return std::make_unique<RingAllreduce>(comm, o);
       }},
      {"rd", "recursive doubling of whole vectors; latency-optimal for small messages",
       rd_allreduce_cost_s,
       [](ucx::Comm& comm, const AlgorithmOptions& o) -> std::unique_ptr<AllreduceAlgorithm> {
         return std::make_unique<RdAllreduce>(comm, o);
       }},
      {"rhd",
       "Rabenseifner: recursive-halving reduce-scatter + recursive-doubling all-gather, chunked",
       rhd_allreduce_cost_s,
       [](ucx::Comm& comm, const AlgorithmOptions& o) -> std::unique_ptr<AllreduceAlgorithm> {
         return std::make_unique<RhdAllreduce>(comm, o);
       }},
      {"tree",
       "binary tree: chunks reduced up to the root and broadcast down, pipelined; few steps",
       tree_allreduce_cost_s,
       [](ucx::Comm& comm, const AlgorithmOptions& o) -> std::unique_ptr<AllreduceAlgorithm> {
         return std::make_unique<TreeAllreduce>(comm, o);
       }},
      {"dbt",
       "double binary tree: two complementary pipelined trees, half the data each; log steps, "
       "ring-like bandwidth",
       dbt_allreduce_cost_s,
       [](ucx::Comm& comm, const AlgorithmOptions& o) -> std::unique_ptr<AllreduceAlgorithm> {
         return std::make_unique<DbtAllreduce>(comm, o);
       }},
  };
  return kAlgorithms;
}

bool allreduce_without_peers(const AllreduceArgs& a, int p, memory::MemorySpace& space) {
  if (p != 1 && a.count != 0) return false;
  if (a.sendbuf != a.recvbuf && a.count > 0) {
    space.copy(a.recvbuf, a.sendbuf, a.count * size_of(a.type));
  }
  return true;
}

const AllreduceAlgorithmInfo& find_allreduce_algorithm(std::string_view name) {
  return find_algorithm(Collective::kAllreduce, name);
}

}  // namespace ibscope
