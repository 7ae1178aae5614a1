#pragma once
/// How messages in a given memory space travel through UCX: host memory goes straight to UCX;
/// device memory goes straight to UCX only when the UCX in use was built with CUDA support
/// ("direct", UCX's own GPUDirect/cuda_copy paths), otherwise through pinned host bounce buffers
/// ("staged", fragments pipelined so that copies overlap the network). Pure.

#include <cstddef>
#include <string>
#include <string_view>

#include "ibscope/memory/memory_space.hpp"

namespace ibscope::memory {

enum class MemPath { kHost, kDirect, kStaged };
enum class PathRequest { kAuto, kDirect, kStaged };

/// What a command line asked for (--mem, --mem-path, --stage-chunk).
struct MemoryRequest {
  MemKind kind = MemKind::kHost;
  PathRequest path = PathRequest::kAuto;
  std::size_t fragment_bytes = 1 << 20;  ///< a staged message moves in fragments of this size
  int window = 4;                        ///< fragments of one message in flight
};

/// "host", "direct", "staged" / "auto", "direct", "staged".
std::string_view name_of(MemPath path) noexcept;
std::string_view name_of(PathRequest request) noexcept;
/// "auto" | "direct" | "staged"; throws UsageError listing them.
PathRequest parse_path_request(std::string_view text);

struct PathDecision {
  MemPath path = MemPath::kHost;
  std::string reason;  ///< one line, for the log and the results' params
};

/// auto: host memory -> host; CUDA memory -> direct when `ucx_supports_cuda` else staged.
/// staged: always staged (host memory too: every message takes one extra copy through a bounce
/// buffer, which measures that copy's cost and tests the pipeline). direct: host memory ->
/// host; CUDA memory without UCX CUDA support -> UsageError naming what UCX reports and the
/// remedy (a UCX built --with-cuda, or --mem-path staged).
PathDecision choose_path(MemKind kind, PathRequest request, bool ucx_supports_cuda,
                         std::string_view ucx_version);

}  // namespace ibscope::memory
