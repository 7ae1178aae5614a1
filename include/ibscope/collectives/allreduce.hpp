#pragma once
/// All-reduce algorithms over UCX and their registry (collective.hpp has the interface; the
/// names below are the all-reduce spellings of it).

#include <string_view>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/transport/ucx/comm.hpp"

namespace ibscope {

using AllreduceArgs = CollectiveArgs;
using AllreduceAlgorithm = CollectiveAlgorithm;
using AllreduceAlgorithmInfo = CollectiveAlgorithmInfo;

/// Every registered all-reduce algorithm, in presentation order.
const std::vector<AllreduceAlgorithmInfo>& allreduce_algorithms();
/// The all-reduce that needs no communication (one rank, or no elements): copies the input to
/// the output when out of place. Returns true when it handled the call.
bool allreduce_without_peers(const AllreduceArgs& args, int p, memory::MemorySpace& space);
/// Looks one up by name; throws UsageError listing the names.
const AllreduceAlgorithmInfo& find_allreduce_algorithm(std::string_view name);

}  // namespace ibscope
