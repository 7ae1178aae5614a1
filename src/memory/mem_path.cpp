#include "ibscope/memory/mem_path.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"

namespace ibscope::memory {

std::string_view name_of(MemPath path) noexcept {
  switch (path) {
    case MemPath::kHost:
      return "host";
    case MemPath::kDirect:
      return "direct";
    case MemPath::kStaged:
      return "staged";
  }
  return "?";
}

std::string_view name_of(PathRequest request) noexcept {
  switch (request) {
    case PathRequest::kAuto:
      return "auto";
    case PathRequest::kDirect:
      return "direct";
    case PathRequest::kStaged:
      return "staged";
  }
  return "?";
}

PathRequest parse_path_request(std::string_view text) {
  if (text == "auto") return PathRequest::kAuto;
  if (text == "direct") return PathRequest::kDirect;
  if (text == "staged") return PathRequest::kStaged;
  throw UsageError(fmt::format("--mem-path '{}': expected auto, direct or staged", text));
}

PathDecision choose_path(MemKind kind, PathRequest request, bool ucx_supports_cuda,
                         std::string_view ucx_version) {
  if (request == PathRequest::kStaged) {
    return {MemPath::kStaged,
            kind == MemKind::kHost
                ? "staged (asked): host buffers copied through bounce buffers, one extra copy "
                  "per message"
                : "staged (asked): device buffers copied through pinned host buffers"};
  }
  if (kind == MemKind::kHost) return {MemPath::kHost, "host buffers, UCX directly"};
  if (ucx_supports_cuda) {
    return {MemPath::kDirect,
            fmt::format("direct: UCX {} reports CUDA memory support; device buffers go to UCX",
                        ucx_version)};
  }
  if (request == PathRequest::kDirect) {
    throw UsageError(fmt::format(
        "--mem-path direct: UCX {} in use does not support CUDA memory (ucp_context_query "
        "memory types lack cuda; ucx_info -d shows no cuda_copy/cuda_ipc). Use a UCX built "
        "--with-cuda (LD_LIBRARY_PATH, UCX_MODULE_DIR), or --mem-path staged",
        ucx_version));
  }
  return {MemPath::kStaged,
          fmt::format("staged: UCX {} does not support CUDA memory; device buffers copied "
                      "through pinned host buffers, pipelined",
                      ucx_version)};
}

}  // namespace ibscope::memory
