#pragma once
/// What the collective sweep and the soak loop set up alike before they measure: send and
/// receive buffers in the options' memory space sized for the largest message, host mirrors for
/// verification when that space is not host memory, the job's host count, the algorithm that
/// -A auto picks per size, and one algorithm instance per name, made once and kept.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/core/aligned_buffer.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

namespace ibscope::collectives {

/// The largest message of the sweep in bytes, over all its data types.
std::uint64_t max_sweep_bytes(const CollectiveSweepOptions& options);

/// The algorithm run for one size, and why when -A auto chose it.
struct AlgorithmChoice {
  std::string name;
  /// Empty when asked for by name; else "auto: tuning table from <source>" or
  /// "auto: default rule".
  std::string selected_by;
};

class CollectiveWorkspace {
 public:
  /// Collective over `comm`: refuses, before any buffer exists, buffers that would not fit
  /// (UsageError naming "<what> up to <max size>" and `size_flag`, require_buffers_fit), then
  /// allocates them (SystemError on ENOMEM). Borrows `comm` and `options`, which must outlive it.
  CollectiveWorkspace(transport::Comm& comm, const CollectiveSweepOptions& options,
                      std::string_view what, std::string size_flag);
  CollectiveWorkspace(const CollectiveWorkspace&) = delete;
  CollectiveWorkspace& operator=(const CollectiveWorkspace&) = delete;

  std::uint64_t max_bytes() const noexcept { return max_bytes_; }
  memory::MemorySpace& space() const noexcept { return space_; }
  /// Whether the buffers are host memory (then the mirrors are the buffers themselves).
  bool on_host() const noexcept { return on_host_; }
  /// The buffers the algorithms run on, in space(); max_bytes() each.
  std::byte* send() const noexcept { return send_.data(); }
  std::byte* recv() const noexcept { return recv_.data(); }
  /// Their host mirrors, which verification fills and reads.
  std::byte* check_send() const noexcept { return check_send_; }
  std::byte* check_recv() const noexcept { return check_recv_; }
  /// The options' algorithms that run on this job (see skip_unavailable), in order.
  const std::vector<std::string>& algorithms() const noexcept { return algorithms_; }
  /// Whether the buffers are in the intra-host arena (local peers map them).
  bool shared() const noexcept { return arena_ != nullptr; }
  /// Distinct hosts of the job (the tuning table's key beside the rank count).
  int hosts() const noexcept { return hosts_; }

  /// `asked` itself, or for kAutoAlgorithm the tuning table's pick for `bytes`, else the
  /// default rule's. Throws nothing beyond allocation.
  AlgorithmChoice choose(const std::string& asked, std::uint64_t bytes) const;
  /// The instance of algorithm `name`, made on first use (its init is not timed; collective
  /// over `comm` then). Throws UsageError for an unknown name.
  CollectiveAlgorithm& instance(const std::string& name);

 private:
  transport::Comm& comm_;
  const CollectiveSweepOptions& options_;
  std::uint64_t max_bytes_;
  memory::MemorySpace& space_;
  bool on_host_;
  std::vector<std::string> algorithms_;
  // Set when an algorithm of the sweep reads local peers' buffers in place (-A hier): the
  // buffers below are then the arena's, and the algorithms get it in their options.
  std::shared_ptr<intra_host::LocalArena> arena_;
  AlgorithmOptions algorithm_options_;
  memory::SpaceBuffer send_, recv_;
  AlignedBuffer host_send_, host_recv_;
  std::byte* check_send_;
  std::byte* check_recv_;
  int hosts_;
  // Declared after the buffers, so that the algorithms go before the memory they ran on.
  std::map<std::string, std::unique_ptr<CollectiveAlgorithm>> instances_;
};

}  // namespace ibscope::collectives
