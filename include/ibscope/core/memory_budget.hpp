#pragma once
/// Resource limits: what a command's buffers need on one host, against what the host has
/// (MemAvailable, RLIMIT_MEMLOCK, free GPU memory), checked before anything is allocated or
/// registered. A shortfall is a usage error with the numbers and the remedy, never an OOM kill
/// or an obscure registration failure halfway through a sweep.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ibscope/core/error.hpp"

namespace ibscope {

/// What one rank of a command will allocate, at its largest message size.
struct MemoryDemand {
  std::string what{};       ///< "allreduce sweep up to 16 GiB" (for the message)
  std::string size_flag{};  ///< the flag that sets the size ("-e/--maxbytes"), for the remedy
  std::uint64_t host_bytes_per_rank = 0;    ///< pageable or pinned host memory
  std::uint64_t locked_bytes_per_rank = 0;  ///< of which registered (pinned) with a NIC
  std::uint64_t device_bytes_per_rank = 0;  ///< GPU memory, on the rank's own GPU
  int ranks_on_host = 1;                    ///< ranks of the job sharing this host
  std::string host{};                       ///< this host's name (for the message)
};

/// What a host offers; nullopt where a figure is unknown (or unlimited, for memlock).
struct HostMemory {
  std::optional<std::uint64_t> available_bytes{};  ///< MemAvailable of /proc/meminfo
  /// RLIMIT_MEMLOCK soft limit; nullopt when unlimited or the process has CAP_IPC_LOCK (the
  /// kernel does not apply the limit to registrations then).
  std::optional<std::uint64_t> memlock_bytes{};
  std::optional<std::uint64_t> device_free_bytes{};  ///< cudaMemGetInfo's free, when it applies
};

/// Share of MemAvailable a command may plan to use: the rest is for the kernel, UCX's own
/// buffers and everything else on the host.
inline constexpr double kUsableAvailableFraction = 0.9;
/// Locked memory that UCX, the verbs queues and the control buffers need beside the data.
inline constexpr std::uint64_t kLockedOverheadBytes = 64ULL << 20;

/// How to raise RLIMIT_MEMLOCK, for every message that names it (registration failures too).
std::string_view memlock_raise_hint() noexcept;

/// The first shortfall of `need` against `host`, as an error whose one line has both figures
/// and the remedy: a usage error (exit 2) when the sizes do not fit the memory, a system error
/// (exit 1) when the host's RLIMIT_MEMLOCK is the problem. nullopt when it fits (or a figure
/// is unknown). Pure.
std::optional<Error> memory_shortfall(const MemoryDemand& need, const HostMemory& host);

/// Whether the CapEff line of a /proc/<pid>/status text has capability `bit` (CAP_IPC_LOCK is
/// 14); false when the line is missing or malformed. Pure.
bool has_effective_capability(std::string_view status_text, int bit);

/// This host's figures: /proc/meminfo, getrlimit and /proc/self/status (device_free_bytes left
/// empty). Never throws; a figure that cannot be read is nullopt.
HostMemory read_host_memory();

/// Throws memory_shortfall()'s error when `need` does not fit on this host.
void require_memory(const MemoryDemand& need, const HostMemory& host);

/// Saturating a * b, for demands built from sizes a user typed.
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept;

}  // namespace ibscope
