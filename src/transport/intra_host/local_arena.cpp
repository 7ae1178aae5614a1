#include "ibscope/transport/intra_host/local_arena.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::intra_host {
namespace {

// Why this rank breaks the block placement, or "" when it does not.
std::string placement_problem(bootstrap::Bootstrap& bs) {
  const int n = bs.size();
  const int r = bs.rank();
  const int l = bs.local_size();
  const int li = bs.local_rank();
  const auto problem = [&](std::string_view why) {
    return fmt::format(
        "-A hier needs the same number of ranks on every host, placed in "
        "blocks (rank = host index x ranks per host + local rank, as srun's and mpirun's block "
        "distributions place them): {} is local rank {} of {} on its host, in a job of {} ranks "
        "on {} hosts: {}",
        bs.describe(r), li, l, n, bs.host_count(), why);
  };
  if (l < 1 || n % l != 0 || bs.host_count() * l != n) return problem("hosts differ in rank count");
  if (r % l != li) return problem(fmt::format("rank {} mod {} is not its local rank", r, l));
  std::vector<int> block(static_cast<std::size_t>(l));
  for (int i = 0; i < l; ++i) block[static_cast<std::size_t>(i)] = r - li + i;
  bs.learn_hosts(block);
  for (int other : block) {
    if (bs.host(other) != bs.host(r)) {
      return problem(fmt::format("its block holds {}", bs.describe(other)));
    }
  }
  return "";
}

}  // namespace

std::string block_placement_problem(transport::Comm& comm) {
  bootstrap::Bootstrap& bs = comm.bootstrap();
  const std::string mine = placement_problem(bs);
  // Rank 0 picks the first problem any rank found and tells every rank.
  const auto all = bs.gather(std::as_bytes(std::span(mine)), "intra-host placement");
  std::string first;
  for (const auto& blob : all) {
    if (blob.empty()) continue;
    first.assign(reinterpret_cast<const char*>(blob.data()), blob.size());
    break;
  }
  const auto got = bs.broadcast(std::as_bytes(std::span(first)), "intra-host placement");
  return {reinterpret_cast<const char*>(got.data()), got.size()};
}

std::shared_ptr<LocalArena> LocalArena::create(transport::Comm& comm) {
  if (std::string problem = block_placement_problem(comm); !problem.empty()) {
    throw UsageError(problem);
  }
  bootstrap::Bootstrap& bs = comm.bootstrap();
  // One id for the job's segment names, from rank 0.
  std::uint64_t job_id = 0;
  if (bs.rank() == 0) {
    std::random_device rd;
    job_id = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  const auto got = bs.broadcast(std::as_bytes(std::span(&job_id, 1)), "intra-host arena: id");
  if (got.size() != sizeof job_id) throw RemoteError("intra-host arena: a short id from rank 0");
  std::memcpy(&job_id, got.data(), sizeof job_id);

  BlockPlacement pl;
  pl.local_size = bs.local_size();
  pl.local_index = bs.local_rank();
  pl.host_index = bs.rank() / pl.local_size;
  pl.hosts = bs.size() / pl.local_size;
  return std::shared_ptr<LocalArena>(new LocalArena(comm, pl, job_id));
}

LocalArena::LocalArena(transport::Comm& comm, BlockPlacement placement, std::uint64_t job_id)
    : comm_(comm), placement_(placement), job_id_(job_id) {
  if (placement_.local_size == 1) return;
  auto [own, peers] = share(sizeof(Control), "intra-host arena: control blocks");
  own_control_ = std::move(own);
  peer_controls_ = std::move(peers);
  new (own_control_.data()) Control();
}

LocalArena::~LocalArena() = default;

std::string LocalArena::segment_name(int rank, std::uint64_t serial) const {
  return fmt::format("/ibscope-{:016x}-r{}-{}", job_id_, rank, serial);
}

std::pair<memory::ShmSegment, std::vector<memory::ShmSegment>> LocalArena::share(
    std::size_t bytes, std::string_view what) {
  bootstrap::Bootstrap& bs = comm_.bootstrap();
  const std::uint64_t serial = serial_++;
  memory::ShmSegment own = memory::ShmSegment::create(segment_name(bs.rank(), serial), bytes);
  bs.barrier(fmt::format("{}: created", what));
  std::vector<memory::ShmSegment> peers(static_cast<std::size_t>(placement_.local_size));
  for (int i = 0; i < placement_.local_size; ++i) {
    if (i == placement_.local_index) continue;
    peers[static_cast<std::size_t>(i)] =
        memory::ShmSegment::open(segment_name(placement_.local_rank_of(i), serial), bytes);
  }
  bs.barrier(fmt::format("{}: mapped", what));
  own.unlink();
  return {std::move(own), std::move(peers)};
}

memory::SpaceBuffer LocalArena::allocate(std::size_t bytes) {
  if (placement_.local_size == 1) {
    memory::SpaceBuffer plain{AlignedBuffer(bytes)};
    allocations_.push_back({plain.data(), bytes, {}});
    return plain;
  }
  // A segment is never empty; the extra bytes are never handed out.
  auto [own, peers] = share(std::max<std::size_t>(bytes, 64), "intra-host arena: a shared buffer");
  allocations_.push_back({own.data(), bytes, std::move(peers)});
  return memory::SpaceBuffer(std::move(own));
}

const std::byte* LocalArena::peer(int i, const void* mine) const noexcept {
  const auto* p = static_cast<const std::byte*>(mine);
  // Newest first: an address freed and reused belongs to the latest allocation.
  for (auto a = allocations_.rbegin(); a != allocations_.rend(); ++a) {
    if (p < a->mine || p > a->mine + a->bytes) continue;
    if (i == placement_.local_index) return p;
    if (a->peers.empty()) return nullptr;
    return a->peers[static_cast<std::size_t>(i)].data() + (p - a->mine);
  }
  return nullptr;
}

bool LocalArena::contains(const void* p, std::size_t bytes) const noexcept {
  const auto* b = static_cast<const std::byte*>(p);
  return std::any_of(allocations_.begin(), allocations_.end(), [&](const Allocation& a) {
    return b >= a.mine && b + bytes <= a.mine + a.bytes;
  });
}

LocalArena::Control& LocalArena::control(int i) const noexcept {
  const memory::ShmSegment& seg =
      i == placement_.local_index ? own_control_ : peer_controls_[static_cast<std::size_t>(i)];
  return *reinterpret_cast<Control*>(seg.data());
}

void LocalArena::signal(Phase phase, std::uint64_t seq) noexcept {
  if (placement_.local_size == 1) return;
  control(placement_.local_index)
      .flags[static_cast<int>(phase)]
      .seq.store(seq, std::memory_order_release);
}

std::byte* LocalArena::slot(int i, std::uint64_t seq) const noexcept {
  return control(i).slots[seq & 1];
}

void LocalArena::wait_local(Phase phase, std::uint64_t seq, std::string_view what,
                            const Deadline& deadline) {
  for (int i = 0; i < placement_.local_size; ++i) {
    if (i != placement_.local_index) wait_peer(i, phase, seq, what, deadline);
  }
}

void LocalArena::wait_peer(int i, Phase phase, std::uint64_t seq, std::string_view what,
                           const Deadline& deadline) {
  // Spin on the flag alone for a while (a peer on another core sets it within a cache-line
  // transfer), then also progress UCX and check the deadline and the job's health.
  constexpr int kSpinsBetweenChecks = 64;
  const auto& flag = control(i).flags[static_cast<int>(phase)].seq;
  int spins = 0;
  while (flag.load(std::memory_order_acquire) < seq) {
    if (++spins < kSpinsBetweenChecks) continue;
    spins = 0;
    comm_.progress();
    comm_.poll_health(what, deadline, placement_.local_rank_of(i));
  }
}

}  // namespace ibscope::intra_host
