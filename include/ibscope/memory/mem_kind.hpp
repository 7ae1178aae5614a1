#pragma once
/// Where a measurement's buffers live: host memory or CUDA device memory. The one definition for
/// every layer (the collectives' memory spaces, p2p, and the verbs probes' --mem sides).

#include <string_view>

namespace ibscope::memory {

enum class MemKind { kHost, kCuda };

/// "host", "cuda".
std::string_view name_of(MemKind kind) noexcept;
/// "host" | "cuda" (also OSU's "H" | "D" and "device"); throws UsageError listing them.
MemKind parse_mem_kind(std::string_view text);

}  // namespace ibscope::memory
