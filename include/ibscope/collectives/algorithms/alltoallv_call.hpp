#pragma once
/// What every all-to-all-v algorithm does before it exchanges, in one place: checks the call (a
/// plan for this many ranks, out of place), copies the rank's own block, keeps the error context
/// and takes the call's sequence number; and the call's blocks as bytes.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

/// One all-to-all-v call once its prologue (AlltoallvPrologue::begin) has run: the checked plan,
/// the buffers as bytes and the blocks by peer. Borrows the plan and the buffers of the call.
struct AlltoallvCall {
  const AlltoallvPlan& plan;
  std::size_t elem_bytes;
  const std::byte* in;   ///< the send buffer
  std::byte* out;        ///< the receive buffer
  std::uint32_t op_seq;  ///< the call's sequence number (Comm::next_op_seq)

  /// Bytes of this rank's block for rank `to`, and where it starts in the send buffer.
  std::size_t send_bytes(int to) const noexcept {
    return plan.send_counts[static_cast<std::size_t>(to)] * elem_bytes;
  }
  const std::byte* send_block(int to) const noexcept {
    return in + plan.send_offsets[static_cast<std::size_t>(to)] * elem_bytes;
  }
  /// Bytes of rank `from`'s block for this rank, and where it goes in the receive buffer.
  std::size_t recv_bytes(int from) const noexcept {
    return plan.recv_counts[static_cast<std::size_t>(from)] * elem_bytes;
  }
  std::byte* recv_block(int from) const noexcept {
    return out + plan.recv_offsets[static_cast<std::size_t>(from)] * elem_bytes;
  }
  /// The tag of the message that `source` sends in round `round` of this call.
  transport::Tag tag(int source, int round) const noexcept {
    return transport::make_tag(source, op_seq, static_cast<std::uint32_t>(round), 0);
  }
};

/// The part of an all-to-all-v algorithm that every one of them keeps across calls: the memory
/// space of the own block's copy and the error context ("alltoallv NAME (N elements per rank on
/// average)"), reformatted only when the count changes.
class AlltoallvPrologue {
 public:
  /// `algorithm` (a literal: it is kept) names the caller in messages.
  AlltoallvPrologue(std::string_view algorithm, const AlgorithmOptions& options);

  /// The prologue of a call on `comm`: checks it, copies this rank's own block (send block `rank`
  /// to receive block `rank`) and takes the call's sequence number from `comm`, the same on every
  /// rank. Throws UsageError when the call has no plan, one for another rank count, or is in
  /// place (all-to-all-v has no in-place form here: a peer's block and the block from it differ
  /// in size).
  AlltoallvCall begin(const CollectiveArgs& args, transport::Comm& comm);

  /// The error context of the last call begun.
  const std::string& what() const noexcept { return what_; }

 private:
  std::string_view algorithm_;
  std::shared_ptr<memory::MemorySpace> memory_;  // keeps space_ alive
  memory::MemorySpace& space_;
  std::string what_;
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
