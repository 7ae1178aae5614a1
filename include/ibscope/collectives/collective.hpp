#pragma once
/// The collectives ibscope measures, their buffer conventions, and the algorithm interface and
/// registry they share. Lifecycle (as in UCC): construct an algorithm with the communicator
/// (init: scratch and registrations, not timed), then run() any number of times (start +
/// progress + wait: timed).
///
/// Buffer conventions (nccl-tests'): `count` is always the element count of the full vector,
/// and the vector is cut into p blocks whose sizes differ by at most one element (block_of()).
///   allreduce       send: count        recv: count       in place: send == recv
///   reduce_scatter  send: count        recv: block(me)   in place: recv == send + block offset
///   allgather       send: block(me)    recv: count       in place: send == recv + block offset
///   broadcast       send: count (root) recv: count       in place: send == recv
///   alltoallv       send/recv: packed blocks as args.counts says (count: the mean per rank);
///                   out of place only

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ibscope/collectives/cost.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/datatype.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport
namespace ibscope::memory {
class MemorySpace;
}  // namespace ibscope::memory
namespace ibscope::intra_host {
class LocalArena;
}  // namespace ibscope::intra_host

namespace ibscope::collectives {

struct AlltoallvPlan;  // pattern/alltoallv_counts.hpp

/// Block `rank` of a `count`-element vector over p ranks (the first count % p blocks get one
/// element more): what reduce_scatter leaves on, and allgather takes from, rank `rank`.
inline pattern::Span block_of(std::size_t count, int p, int rank) noexcept {
  return pattern::ring_segment(count, p, rank);
}

struct CollectiveArgs {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::size_t count = 0;  ///< elements of the full vector (see the table above)
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;  ///< ignored by allgather and broadcast
  int root = 0;                  ///< broadcast only
  /// alltoallv only: this rank's per-peer counts and offsets (elements), borrowed; null else.
  const AlltoallvPlan* counts = nullptr;
};

struct AlgorithmOptions {
  std::size_t chunk_bytes = 0;  ///< pipeline chunk; 0 = the algorithm's default
  /// Where the buffers live: scratch is allocated, reductions and copies done there. Null:
  /// host memory.
  std::shared_ptr<memory::MemorySpace> memory;
  /// The intra-host arena the harness allocated the buffers in (host memory, when an algorithm
  /// that reads local peers' buffers in place may run: -A hier or auto); null otherwise.
  std::shared_ptr<intra_host::LocalArena> arena;
};

/// The options' memory space (host when none is set).
memory::MemorySpace& space_of(const AlgorithmOptions& options);

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  /// Runs one collective to completion. Every wait ends by `deadline` (TimeoutError naming the
  /// stalled peer); a dead peer gives RemoteError. Never writes the send buffer (unless it is
  /// the receive buffer: in place).
  virtual void run(const CollectiveArgs& args, const Deadline& deadline) = 0;
};

/// What an algorithm needs from the job and how it is priced, declared where it is registered:
/// the harness, the tuning, the model and the fits ask these, never the algorithm's name.
/// The defaults are a flat algorithm: any memory, any placement, one tier.
struct AlgorithmCapabilities {
  /// Reads local peers' buffers in place: the harness allocates the buffers in the intra-host
  /// arena (AlgorithmOptions::arena), which needs the ranks placed in equal blocks per host
  /// (intra_host::block_placement_problem) and host memory on the host path.
  bool needs_intra_host_arena = false;
  /// Non-empty: host memory on the host path only, and this is the UsageError that names it
  /// for other memory (with what to use instead).
  std::string_view host_memory_only{};
  /// Spans two tiers (shared memory inside a host, the network between hosts), priced apart:
  /// the cost of one call on n bytes over `ranks_per_host` ranks on each of `hosts` hosts.
  /// Null: one tier (cost_s). One per-link fit cannot separate two tiers, so the fits give
  /// such an algorithm's rows across several ranks per host no link parameters.
  std::function<double(const LinkCost& intra, const LinkCost& inter, double n_bytes,
                       int ranks_per_host, int hosts)>
      two_tier_cost_s{};
  /// The one-tier algorithm whose measured rows give the tiers this one is priced on (its own
  /// rows mix two tiers); empty: its own rows.
  std::string_view tiers_fitted_by{};
  /// NCCL's name for it (NCCL tuner CSV: "ring", "tree"); empty: NCCL has none.
  std::string_view nccl_name{};
};

struct CollectiveAlgorithmInfo {
  std::string_view name;
  std::string_view description;
  /// Alpha-beta-gamma cost of one call on n bytes (the full vector), the formula the
  /// algorithm's file documents and the model uses.
  std::function<double(const LinkCost&, double n_bytes, int p)> cost_s;
  std::function<std::unique_ptr<CollectiveAlgorithm>(transport::Comm&, const AlgorithmOptions&)>
      create;
  AlgorithmCapabilities caps{};
};

/// Every registered algorithm of a collective, in presentation order (never empty).
std::span<const CollectiveAlgorithmInfo> algorithms_for(Collective c);
/// Looks one up by name; throws UsageError listing the names for that collective.
const CollectiveAlgorithmInfo& find_algorithm(Collective c, std::string_view name);

}  // namespace ibscope::collectives
