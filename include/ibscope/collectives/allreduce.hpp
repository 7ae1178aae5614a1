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
/// Looks one up by name; throws UsageError listing the names.
const AllreduceAlgorithmInfo& find_allreduce_algorithm(std::string_view name);

}  // namespace ibscope
