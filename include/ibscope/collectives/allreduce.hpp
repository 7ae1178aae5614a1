#pragma once
/// All-reduce algorithms over UCX and their registry. Lifecycle (as in UCC): construct with the
/// communicator and the largest buffer the sweep will use (init: scratch and registrations, not
/// timed), then run() any number of times (start + progress + wait: timed).

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/datatype.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/transport/ucx/comm.hpp"

namespace ibscope {

struct AllreduceArgs {
  const void* sendbuf = nullptr;  ///< == recvbuf for in-place
  void* recvbuf = nullptr;
  std::size_t count = 0;  ///< elements
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
};

struct AlgorithmOptions {
  std::size_t chunk_bytes = 0;  ///< pipeline chunk; 0 = the algorithm's default
};

class AllreduceAlgorithm {
 public:
  virtual ~AllreduceAlgorithm() = default;
  /// Runs one all-reduce to completion. Every wait ends by `deadline` (TimeoutError naming the
  /// stalled peer); a dead peer gives RemoteError.
  virtual void run(const AllreduceArgs& args, const Deadline& deadline) = 0;
};

struct AllreduceAlgorithmInfo {
  std::string_view name;
  std::string_view description;
  /// Alpha-beta-gamma cost, the same formula the model uses.
  std::function<double(const LinkCost&, double n_bytes, int p)> cost_s;
  std::function<std::unique_ptr<AllreduceAlgorithm>(ucx::Comm&, const AlgorithmOptions&)> create;
};

/// Every registered all-reduce algorithm, in presentation order.
const std::vector<AllreduceAlgorithmInfo>& allreduce_algorithms();
/// Looks one up by name; throws UsageError listing the names.
const AllreduceAlgorithmInfo& find_allreduce_algorithm(std::string_view name);

}  // namespace ibscope
