#pragma once
/// Pipelined ring (chain) broadcast: the root sends the vector in chunks to the next rank of
/// the ring, and every rank forwards each chunk as soon as it has arrived, so that all links
/// of the chain carry different chunks at once.
///
/// Steps: p-1 hops, pipelined over C = n / chunk chunks: (p-2+C) chunk times. Bytes on the
/// wire per rank: n (the last rank of the chain only receives). Cost: (p-2+C)(alpha + chunk
/// beta) ~ (p-1) alpha + n beta for large n. busbw factor (nccl-tests): 1.

#include <cstddef>
#include <deque>
#include <memory>
#include <string>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

double ring_broadcast_cost_s(const LinkCost& c, double n_bytes, int p) noexcept;

class RingBroadcast final : public CollectiveAlgorithm {
 public:
  static constexpr std::size_t kDefaultChunkBytes = 256 * 1024;

  RingBroadcast(transport::Comm& comm, const AlgorithmOptions& options);
  void run(const CollectiveArgs& args, const Deadline& deadline) override;

 private:
  struct Pending {
    std::size_t chunk;
    transport::Request req;
  };

  transport::Comm& comm_;
  std::size_t chunk_bytes_;
  std::shared_ptr<memory::MemorySpace> memory_;  // where the buffers live (host by default)
  std::deque<Pending> recvs_, sends_;
  std::string what_;
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
