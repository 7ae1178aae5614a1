#pragma once
/// Per rank, before a sweep: where its buffers live (--mem), on which GPU, and how they meet UCX
/// (--mem-path): a memory space, and the communicator set to fragment and stage accordingly.

#include <memory>
#include <string>

#include "ibscope/memory/mem_path.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::transport {
class Comm;
}

namespace ibscope::measure {

struct MemorySetup {
  std::shared_ptr<memory::MemorySpace> space;
  memory::PathDecision decision;
  std::string gpu_reason;  ///< which GPU and why ("" for host memory)
};

/// Collective over the job: makes this rank's memory space (CUDA: the GPU choose_gpu picks from
/// this host's topology for the local rank and the NIC in UCX_NET_DEVICES, else local rank
/// modulo the visible devices), decides the path, and when any rank stages, sets every rank's
/// communicator to the same fragment size (the staging ranks with their copy engine). Rank 0
/// logs the decision once.
MemorySetup setup_memory(transport::Comm& comm, const memory::MemoryRequest& request);

}  // namespace ibscope::measure
