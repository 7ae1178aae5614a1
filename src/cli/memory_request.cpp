// --mem/--mem-path/--stage-chunk parsing, apart from setup_memory (which needs UCX and the
// topology) so that the flag parser can be fuzzed on its own.
#include "ibscope/cli/memory_request.hpp"

#include <fmt/format.h>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/gpu/cuda.hpp"

namespace ibscope::cli {

memory::MemoryRequest parse_memory_request(const std::string& mem, const std::string& path,
                                           const std::string& stage_chunk) {
  memory::MemoryRequest r;
  r.kind = memory::parse_mem_kind(mem);
  r.path = memory::parse_path_request(path);
  r.fragment_bytes = units::parse_size_bytes(stage_chunk, "--stage-chunk");
  if (r.fragment_bytes < 4096 || r.fragment_bytes > (1ULL << 30)) {
    throw UsageError(fmt::format("--stage-chunk {}: expected 4K..1G", stage_chunk));
  }
  if (r.kind == memory::MemKind::kCuda && !gpu::built_with_cuda()) {
    throw UsageError(
        "--mem cuda: this ibscope was built without CUDA (no CUDA toolkit at configure time, or "
        "-DIBSCOPE_CUDA=OFF); rebuild with the CUDA toolkit installed, or use --mem host");
  }
  return r;
}

}  // namespace ibscope::cli
