#pragma once
/// Symmetric shared memory among the ranks of one host: the single-copy intra-host path.
///
/// Every rank allocates the same buffers in the same order (the collective workspace's send and
/// receive buffers); on a host with several ranks each allocation is a POSIX shared-memory
/// segment that every local rank maps, so a rank can read a local peer's buffer in place: the
/// peer's address of a byte is its own address translated into the peer's mapping (peer()).
/// Each rank also has a control block in shared memory with one flag per phase of a call;
/// signal() and wait_local() synchronise the local ranks through them, with the deadline, the
/// bootstrap's health check (a local peer that dies ends the wait naming it) and the interrupt
/// check of every other wait.
///
/// Placement: the same number of ranks L on every host, in blocks (rank = host index x L +
/// local rank), as srun's and mpirun's default block distributions give. create() checks it on
/// every rank, for every rank (UsageError naming the first rank that breaks it).
///
/// Names are "/ibscope-<job id>-r<rank>-<serial>"; every name is unlinked as soon as the local
/// peers have mapped it, so nothing is left in /dev/shm after a crash.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/clock.hpp"
#include "ibscope/memory/memory_space.hpp"
#include "ibscope/memory/shm_segment.hpp"

namespace ibscope::bootstrap {
class Bootstrap;
}  // namespace ibscope::bootstrap
namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::intra_host {

/// Where a rank sits in a block placement.
struct BlockPlacement {
  int local_size = 1;   ///< L: ranks per host
  int local_index = 0;  ///< this rank's index among them
  int host_index = 0;   ///< rank / L
  int hosts = 1;        ///< size / L
  /// The global rank of local index `i` on this rank's host.
  int local_rank_of(int i) const noexcept { return host_index * local_size + i; }
  /// The global rank of the rank with this rank's local index on host `h`.
  int rail_rank_of(int h) const noexcept { return h * local_size + local_index; }
};

/// Collective over every rank of `comm`: why the ranks are not in a block placement (the first
/// rank that breaks it, named), or "" when they are; the same answer on every rank.
std::string block_placement_problem(transport::Comm& comm);

/// The phases of one intra-host call, each a flag in every rank's control block.
enum class Phase : int { kArrived = 0, kReduced = 1, kDone = 2 };
inline constexpr int kPhases = 3;

class LocalArena {
 public:
  /// Collective over every rank of `comm`: checks the placement on every rank (UsageError on
  /// every rank naming the first offender), agrees on a job id and maps the control blocks.
  static std::shared_ptr<LocalArena> create(transport::Comm& comm);

  LocalArena(const LocalArena&) = delete;
  LocalArena& operator=(const LocalArena&) = delete;
  ~LocalArena();

  const BlockPlacement& placement() const noexcept { return placement_; }

  /// `bytes` of host memory that the local peers map too. Collective over every rank, which
  /// must make the same allocations in the same order. On a host with one rank: plain memory.
  memory::SpaceBuffer allocate(std::size_t bytes);

  /// Local peer `i`'s address of the byte this rank has at `mine` (a pointer into one of this
  /// arena's allocations), or nullptr when `mine` is in none of them.
  const std::byte* peer(int i, const void* mine) const noexcept;
  /// Whether [p, p + bytes) lies inside one allocation of this arena.
  bool contains(const void* p, std::size_t bytes) const noexcept;

  /// Sets this rank's flag for `phase` to `seq` (release).
  void signal(Phase phase, std::uint64_t seq) noexcept;
  /// Waits until every local peer's flag for `phase` reaches `seq` (acquire), within `deadline`,
  /// progressing `comm` and checking its health; TimeoutError names the first peer not there.
  void wait_local(Phase phase, std::uint64_t seq, std::string_view what, const Deadline& deadline);
  /// The same for local peer `i` alone (i != this rank's local index).
  void wait_peer(int i, Phase phase, std::uint64_t seq, std::string_view what,
                 const Deadline& deadline);
  /// A fresh call number, the same on every local rank as long as they make the same calls.
  std::uint64_t next_seq() noexcept { return ++seq_; }

  /// Bytes of each of a rank's two small-message slots: shared staging for calls too small to
  /// be worth the three phases of the in-place path (a call copies its input into slot
  /// seq % 2; see HierAllreduce).
  static constexpr std::size_t kSlotBytes = 16 * 1024;
  /// Local rank `i`'s slot for call `seq` (this rank's own for i == local_index()).
  std::byte* slot(int i, std::uint64_t seq) const noexcept;

 private:
  struct Allocation {
    std::byte* mine = nullptr;
    std::size_t bytes = 0;
    std::vector<memory::ShmSegment> peers;  // by local index; this rank's own slot is empty
  };
  struct alignas(64) Flag {
    std::atomic<std::uint64_t> seq{0};
  };
  struct Control {
    Flag flags[kPhases];
    alignas(64) std::byte slots[2][kSlotBytes];
  };

  LocalArena(transport::Comm& comm, BlockPlacement placement, std::uint64_t job_id);
  std::string segment_name(int rank, std::uint64_t serial) const;
  // Creates this rank's segment, maps the local peers' after a job-wide barrier, unlinks.
  std::pair<memory::ShmSegment, std::vector<memory::ShmSegment>> share(std::size_t bytes,
                                                                       std::string_view what);
  Control& control(int i) const noexcept;

  transport::Comm& comm_;
  BlockPlacement placement_;
  std::uint64_t job_id_;
  std::uint64_t serial_ = 0;
  std::uint64_t seq_ = 0;
  memory::ShmSegment own_control_;
  std::vector<memory::ShmSegment> peer_controls_;
  std::vector<Allocation> allocations_;
};

}  // namespace ibscope::intra_host
