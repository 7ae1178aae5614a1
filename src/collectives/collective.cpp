#include "ibscope/collectives/collective.hpp"

#include <fmt/format.h>

#include "ibscope/collectives/algorithms/ring_allgather.hpp"
#include "ibscope/collectives/algorithms/ring_broadcast.hpp"
#include "ibscope/collectives/algorithms/ring_reduce_scatter.hpp"
#include "ibscope/collectives/allreduce.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope {

std::string_view name_of(Collective c) noexcept {
  switch (c) {
    case Collective::kAllreduce:
      return "allreduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllgather:
      return "allgather";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "?";
}

std::optional<Collective> collective_named(std::string_view name) noexcept {
  for (Collective c : kAllCollectives) {
    if (name_of(c) == name) return c;
  }
  return std::nullopt;
}

memory::MemorySpace& space_of(const AlgorithmOptions& options) {
  return options.memory ? *options.memory : *memory::host_space();
}

double busbw_factor(Collective c, int p) noexcept {
  if (p <= 1) return 0;
  switch (c) {
    case Collective::kAllreduce:
      return 2.0 * (p - 1) / p;
    case Collective::kReduceScatter:
    case Collective::kAllgather:
      return static_cast<double>(p - 1) / p;
    case Collective::kBroadcast:
      return 1.0;
  }
  return 0;
}

bool reduces(Collective c) noexcept {
  return c == Collective::kAllreduce || c == Collective::kReduceScatter;
}

namespace {

template <typename Algorithm>
std::unique_ptr<CollectiveAlgorithm> make(ucx::Comm& comm, const AlgorithmOptions& o) {
  return std::make_unique<Algorithm>(comm, o);
}

const std::vector<CollectiveAlgorithmInfo>& reduce_scatter_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring", "p-1 ring steps, pipelined in chunks; bandwidth-optimal", ring_reduce_scatter_cost_s,
       make<RingReduceScatter>},
  };
  return kAlgorithms;
}

const std::vector<CollectiveAlgorithmInfo>& allgather_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring", "p-1 ring steps, pipelined in chunks; bandwidth-optimal", ring_allgather_cost_s,
       make<RingAllgather>},
  };
  return kAlgorithms;
}

const std::vector<CollectiveAlgorithmInfo>& broadcast_algorithms() {
  static const std::vector<CollectiveAlgorithmInfo> kAlgorithms = {
      {"ring", "chain from the root along the ring, pipelined in chunks", ring_broadcast_cost_s,
       make<RingBroadcast>},
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

}  // namespace ibscope
