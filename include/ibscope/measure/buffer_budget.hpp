#pragma once
/// The resource-limit check of the commands (collective sweep, soak, p2p, probes): each rank
/// works out its buffers at the largest size, times the ranks on its host, and refuses before
/// any exists when they do not fit (core/memory_budget.hpp).

#include <cstdint>
#include <string>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/core/memory_budget.hpp"
#include "ibscope/memory/memory_space.hpp"

namespace ibscope::transport {
class Comm;
}  // namespace ibscope::transport

namespace ibscope::measure {

/// Completes `need` with this rank's host and the ranks on it, reads the host's figures (and
/// the current GPU's free memory when `need` has device bytes) and throws require_memory()'s
/// error when it does not fit. Local: no bootstrap traffic.
void require_memory_here(const bootstrap::Bootstrap& boot, MemoryDemand need);

struct BufferPlan {
  std::string what;         ///< "allreduce sweep up to 16 GiB"
  std::string size_flag;    ///< "-e/--maxbytes"
  std::uint64_t bytes = 0;  ///< each buffer
  int buffers = 0;          ///< in `kind` memory
  int host_mirrors = 0;     ///< host buffers of `bytes` beside device buffers (verification)
  memory::MemKind kind = memory::MemKind::kHost;
};

/// A collective's buffers at `bytes`: send, receive and the algorithms' scratch (up to one
/// message) in `kind` memory, and two host mirrors of send and receive to verify device data.
BufferPlan collective_buffer_plan(std::string what, std::string size_flag, std::uint64_t bytes,
                                  memory::MemKind kind);

/// Throws UsageError naming this host, both figures and the remedy when `plan` does not fit:
/// MemAvailable for host buffers of all ranks on the host, RLIMIT_MEMLOCK when UCX reaches a
/// peer over a NIC transport (it pins host buffers), free GPU memory for device buffers. A
/// collective call: ends with a bootstrap barrier, so no rank allocates before all checked.
void require_buffers_fit(const transport::Comm& comm, const BufferPlan& plan);

}  // namespace ibscope::measure
