#include "ibscope/core/memory_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"

namespace ibscope {

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

std::string_view memlock_raise_hint() noexcept {
  return "'ulimit -l unlimited', 'memlock unlimited' in /etc/security/limits.conf, or "
         "LimitMEMLOCK=infinity for slurmd or the container; Slurm passes the submitting "
         "shell's limit unless PropagateResourceLimits says otherwise";
}

namespace {

std::string per_host(const MemoryDemand& need, std::uint64_t per_rank) {
  if (need.ranks_on_host <= 1) return units::format_size(per_rank);
  return fmt::format(
      "{} ({} ranks x {})",
      units::format_size(saturating_mul(per_rank, static_cast<std::uint64_t>(need.ranks_on_host))),
      need.ranks_on_host, units::format_size(per_rank));
}

std::string fewer_ranks(const MemoryDemand& need) {
  return need.ranks_on_host > 1 ? ", or run fewer ranks per host" : "";
}

}  // namespace

std::optional<Error> memory_shortfall(const MemoryDemand& need, const HostMemory& host) {
  const auto ranks = static_cast<std::uint64_t>(std::max(need.ranks_on_host, 1));
  const std::string where = need.host.empty() ? std::string("this host") : need.host;
  if (host.available_bytes) {
    const std::uint64_t wanted = saturating_mul(need.host_bytes_per_rank, ranks);
    const auto usable = static_cast<std::uint64_t>(static_cast<double>(*host.available_bytes) *
                                                   kUsableAvailableFraction);
    if (wanted > usable) {
      return UsageError(
          fmt::format("{} needs {} of host memory on {}, which has {} available (MemAvailable in "
                      "/proc/meminfo; ibscope plans with at most {:.0f}% of it): lower {}{}",
                      need.what, per_host(need, need.host_bytes_per_rank), where,
                      units::format_size(*host.available_bytes), kUsableAvailableFraction * 100,
                      need.size_flag, fewer_ranks(need)));
    }
  }
  if (host.memlock_bytes && need.locked_bytes_per_rank > 0) {
    // The limit is per process: each rank may lock up to it.
    const std::uint64_t wanted = need.locked_bytes_per_rank + kLockedOverheadBytes;
    if (wanted > *host.memlock_bytes) {
      return Error(
          ErrorKind::kSystem,
          fmt::format(
              "{} registers {} per rank with the NIC, plus about {} for queues and UCX, but on "
              "{} this process's locked-memory limit RLIMIT_MEMLOCK is {}: raise it ({}), or "
              "lower {}",
              need.what, units::format_size(need.locked_bytes_per_rank),
              units::format_size(kLockedOverheadBytes), where,
              units::format_size(*host.memlock_bytes), memlock_raise_hint(), need.size_flag));
    }
  }
  if (host.device_free_bytes && need.device_bytes_per_rank > 0 &&
      need.device_bytes_per_rank > *host.device_free_bytes) {
    return UsageError(
        fmt::format("{} needs {} of GPU memory per rank on {}, and the GPU has {} free "
                    "(cudaMemGetInfo): lower {}, or free the GPU",
                    need.what, units::format_size(need.device_bytes_per_rank), where,
                    units::format_size(*host.device_free_bytes), need.size_flag));
  }
  return std::nullopt;
}

void require_memory(const MemoryDemand& need, const HostMemory& host) {
  if (auto why = memory_shortfall(need, host)) throw *why;
}

bool has_effective_capability(std::string_view text, int bit) {
  constexpr std::string_view kKey = "CapEff:";
  std::size_t pos = text.starts_with(kKey) ? 0 : text.find("\nCapEff:");
  if (pos == std::string_view::npos || bit < 0 || bit > 63) return false;
  pos = text.find(':', pos) + 1;
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  std::uint64_t mask = 0;
  const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), mask, 16);
  if (ec != std::errc() || end == text.data() + pos) return false;
  return ((mask >> bit) & 1U) != 0;
}

}  // namespace ibscope
