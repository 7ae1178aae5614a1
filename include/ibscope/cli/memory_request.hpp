#pragma once
/// --mem, --mem-path and --stage-chunk as a memory request (what setup_memory,
/// measure/memory_setup.hpp, then makes of it on each rank). Apart from the UCX and topology
/// side so that the flag parser can be fuzzed on its own.

#include <string>

#include "ibscope/memory/mem_path.hpp"

namespace ibscope::cli {

/// Parses --mem (one kind), --mem-path and --stage-chunk. UsageError for unknown values, and
/// for --mem cuda in a build without CUDA (naming the rebuild).
memory::MemoryRequest parse_memory_request(const std::string& mem, const std::string& path,
                                           const std::string& stage_chunk);

}  // namespace ibscope::cli
